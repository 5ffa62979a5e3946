package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/netlab"
)

// TestEnrollment: machines that found a fleet by --fleet-seed ask its leader to admit them with
// ENROLL and wait, pending, serving their own builds. The operator lists them, approves one (it
// becomes a learner whose builds lease the fleet's workers), rejects another (it stays a
// cluster of one and stops asking), and an approval naming the wrong key is refused.
func TestEnrollment(t *testing.T) {
	_, hosts := netlab.ForTest(t, "v1", "j1", "j2", "j3")
	v1, j1, j2 := newMachine(t, hosts[0]), newMachine(t, hosts[1]), newMachine(t, hosts[2])
	v1.start("--slots=2")
	seed := "--fleet-seed=" + v1.addr()
	j1.start("--slots=0", seed)
	j2.start("--slots=1", seed)

	eventually(t, "both machines on the leader's enrollment list", 30*time.Second, func() (bool, string) {
		out := v1.operator("--scheduler="+v1.addr(), "--enroll-list")
		return strings.Contains(out, "--enroll-approve=j1@"+j1.key) && strings.Contains(out, "--enroll-approve=j2@"+j2.key), out
	})
	out, err := v1.tryOperator("--scheduler="+v1.addr(), "--enroll-approve=j1@"+j2.key)
	if err == nil || !strings.Contains(out, "not the key that machine asked with") {
		t.Fatalf("an approval naming another machine's key: %v\n%s", err, out)
	}
	if n := v1.metric("pace_enrollment_approvals_refused_key_mismatch_total"); n != 1 {
		t.Fatalf("key mismatches counted: %v", n)
	}
	admit(t, v1, "--enroll-approve=j1@"+j1.key)
	admit(t, v1, "--enroll-reject=j2")

	eventually(t, "j1 a learner of v1's fleet", time.Minute, func() (bool, string) {
		st := v1.status()
		_, learners := seats(st)
		return learners == 1 && strings.Contains(st, "j1 "), st
	})
	eventually(t, "j1 to have joined, its own cluster archived", 30*time.Second, func() (bool, string) {
		archived, _ := filepath.Glob(filepath.Join(j1.dir, "archive", "*", "raft.db"))
		return j1.metric("pace_formation_joins_total") == 1 && len(archived) == 1, j1.logText()
	})
	eventually(t, "j2 told it was rejected, back to a cluster of one", 30*time.Second, func() (bool, string) {
		return strings.Contains(j2.logText(), "the fleet rejected this node"), j2.logText()
	})
	if st := v1.status(); strings.Contains(st, "j2 ") {
		t.Fatalf("a rejected machine became a member:\n%s", st)
	}
	if n := v1.metric("pace_enrollment_approvals_manual_total"); n != 1 {
		t.Fatalf("manual approvals counted: %v", n)
	}
	t.Run("the learner's build leases a worker on another machine", func(t *testing.T) {
		compileLeased(t, j1, v1)
	})
	t.Run("an automatic window admits a machine without an operator, until it is closed", func(t *testing.T) {
		out := v1.operator("--scheduler="+v1.addr(), "--enroll-auto-approve=2m")
		if !strings.Contains(out, "AUTOMATIC WINDOW OPEN") {
			t.Fatalf("opening the window:\n%s", out)
		}
		j3 := newMachine(t, hosts[3])
		j3.start("--slots=0", seed)
		eventually(t, "j3 a learner without an approval", time.Minute, func() (bool, string) {
			return j3.metric("pace_formation_joins_total") == 1, j3.logText()
		})
		if n := v1.metric("pace_enrollment_approvals_auto_total"); n != 1 {
			t.Fatalf("automatic approvals counted: %v", n)
		}
		if out := v1.operator("--scheduler="+v1.addr(), "--enroll-auto-approve=off"); !strings.Contains(out, "enrollment: manual") {
			t.Fatalf("closing the window:\n%s", out)
		}
	})
}

// compileLeased compiles one C file through pace-cc on client, whose node has no worker, and
// waits for the compile to be counted on worker: it was leased and sent there.
func compileLeased(t *testing.T, client, worker *machine) {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join(dir, "leased.c")
	before := worker.metric("pace_worker_jobs_completed_total")
	eventually(t, "a compile leased to "+worker.name, time.Minute, func() (bool, string) {
		// A new source each try: a miss every time, never a hit from the try before.
		if err := os.WriteFile(src, []byte(fmt.Sprintf("int leased(int x) { return x * %d; }\n", time.Now().UnixNano())), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := client.host.Command(context.Background(), paceCC, "gcc", "-O2", "-c", src, "-o", filepath.Join(dir, "leased.o"))
		cmd.Env = append(os.Environ(), "HOME="+dir, "PACE_ADDR=127.0.0.1:6674", "PACE_SCHEDULER=127.0.0.1:6674", "PACE_VERBOSE=1", "LC_ALL=C")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("pace-cc: %v\n%s", err, out)
		}
		n := worker.metric("pace_worker_jobs_completed_total")
		return n > before, string(out)
	})
}
