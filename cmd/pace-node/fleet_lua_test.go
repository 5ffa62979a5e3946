package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// luaBuild is a build of Lua on the client machine, every compile through pace-cc with
// PACE_SCHEDULER at the client's own node (which has no worker, so every miss is leased from
// the fleet's leader and compiled on another machine).
type luaBuild struct {
	src      string
	out      strings.Builder
	finished chan error
}

// startLuaBuild untars Lua afresh and starts `make -j2 posix` in the client's namespace;
// makeArgs are added (MYCFLAGS=… makes every compile a miss again).
func startLuaBuild(t *testing.T, client *machine, makeArgs ...string) *luaBuild {
	t.Helper()
	b := &luaBuild{src: untarIn(t, corpusTarball(t, "lua5.4_5.4.4.orig.tar.gz")), finished: make(chan error, 1)}
	args := append([]string{"-j2", "posix", "CC=" + paceCC + " gcc"}, makeArgs...)
	cmd := client.host.Command(context.Background(), "make", args...)
	cmd.Dir = b.src
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "PACE_ADDR=127.0.0.1:6674", "PACE_SCHEDULER=127.0.0.1:6674", "LC_ALL=C")
	cmd.Stdout, cmd.Stderr = &b.out, &b.out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { b.finished <- cmd.Wait() }()
	return b
}

// wait fails the test unless the build succeeds.
func (b *luaBuild) wait(t *testing.T, what string) {
	t.Helper()
	if err := <-b.finished; err != nil {
		t.Fatalf("%s: the build failed: %v\n%s", what, err, b.out.String())
	}
}

// objects are the build's object files.
func (b *luaBuild) objects() []string {
	objs, _ := filepath.Glob(filepath.Join(b.src, "src", "*.o"))
	return objs
}

// jobsOn sums pace_worker_jobs_completed_total over the named machines that run.
func jobsOn(ms map[string]*machine, names ...string) float64 {
	total := 0.0
	for _, name := range names {
		if m := ms[name]; m.cmd.ProcessState == nil {
			total += m.metric("pace_worker_jobs_completed_total")
		}
	}
	return total
}

// luaAcrossMachines builds Lua on the client, whose node has no worker, with every compile
// leased from the fleet's leader and compiled elsewhere; once compiles are flowing the leader
// (v1) is killed: the build must still finish, compiles must go on landing on the survivors
// under the new leader's leases, and every object must be byte-identical to plain gcc's.
func luaAcrossMachines(t *testing.T, ms map[string]*machine) {
	plain := untarIn(t, corpusTarball(t, "lua5.4_5.4.4.orig.tar.gz"))
	cmd := exec.Command("make", "-j2", "posix")
	cmd.Dir = plain
	out, err := cmd.CombinedOutput()
	must(t, out, err, "plain build")
	build := startLuaBuild(t, ms["client"])
	v1 := ms["v1"]
	eventually(t, "compiles leased by the founder", 2*time.Minute, func() (bool, string) {
		select {
		case err := <-build.finished:
			t.Fatalf("the build ended (%v) before the founder leased 4 compiles:\n%s", err, build.out.String())
		default:
		}
		n := v1.metric("pace_dispatch_leases_granted_total")
		return n >= 4, fmt.Sprint(n)
	})
	v1.kill() // the leader, in the middle of the build
	atKill := jobsOn(ms, "v2", "v3", "l1")
	build.wait(t, "the leader died mid-build")
	after := jobsOn(ms, "v2", "v3", "l1")
	if after <= atKill {
		t.Fatalf("no compile landed on the survivors after the leader died (%v then, %v now); build log:\n%s", atKill, after, build.out.String())
	}
	granted := ms["v2"].metric("pace_dispatch_leases_granted_total") + ms["v3"].metric("pace_dispatch_leases_granted_total")
	if granted < 1 {
		t.Fatalf("the new leader granted no lease: its workers never re-registered")
	}
	objs := build.objects()
	if len(objs) < 30 {
		t.Fatalf("%d objects", len(objs))
	}
	for _, o := range objs {
		sameFile(t, o, filepath.Join(plain, "src", filepath.Base(o)))
	}
	t.Logf("%d objects byte-identical to plain gcc; %.0f compiled on v2, v3 and l1, %.0f of them after the leader died, under %.0f leases of the new leader",
		len(objs), after, after-atKill, granted)
}

func untarIn(t *testing.T, tarball string) string {
	t.Helper()
	dir := t.TempDir()
	out, err := exec.Command("tar", "-xzf", tarball, "-C", dir, "--strip-components=1").CombinedOutput()
	must(t, out, err, "untar")
	return dir
}
