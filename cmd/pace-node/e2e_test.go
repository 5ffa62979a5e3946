package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const helloC = "#include <stdio.h>\nint twice(int x) { return 2 * x; }\nint main(void) { printf(\"%d\\n\", twice(21)); return 0; }\n"

func project(t *testing.T) string {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "hello.c"), []byte(helloC), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func registered(n *nodeProc) func() bool {
	return func() bool { return n.metric("pace_dispatch_worker_registrations_total") >= 1 }
}

// TestDispatchedCompileIsByteIdenticalThenAHit: a miss leased from the node's scheduler and
// compiled by its worker lands exactly what gcc writes, the lease is released, and the next
// build is a cache hit.
func TestDispatchedCompileIsByteIdenticalThenAHit(t *testing.T) {
	_, kvAddr := startKV(t, "")
	n := startNode(t, t.TempDir(), "--upstream="+kvAddr)
	waitFor(t, "the worker's registration", registered(n))
	dir := project(t)
	env := []string{"HOME=" + t.TempDir(), "PACE_ADDR=" + n.addr, "PACE_SCHEDULER=" + n.addr}
	r := cc(t, dir, env, "gcc", "-O2", "-Wall", "-c", "hello.c", "-o", "hello.o")
	if r.status != 0 || !strings.Contains(r.stderr, "DISPATCHED") {
		t.Fatalf("first build: %d\n%s\nnode log:\n%s", r.status, r.stderr, n.log)
	}
	gcc(t, dir, "-O2", "-Wall", "-c", "hello.c", "-o", "plain.o")
	sameFile(t, filepath.Join(dir, "hello.o"), filepath.Join(dir, "plain.o"))
	waitFor(t, "the lease's release", func() bool { return n.metric("pace_dispatch_leases_released_total") == 1 })
	if n.metric("pace_dispatch_leases_granted_total") != 1 || n.metric("pace_worker_jobs_completed_total") != 1 {
		t.Fatal("grant or job not counted")
	}
	r = cc(t, dir, env, "gcc", "-O2", "-Wall", "-c", "hello.c", "-o", "hello.o")
	if r.status != 0 || !strings.Contains(r.stderr, "HIT") {
		t.Fatalf("second build is not a hit: %s", r.stderr)
	}
	sameFile(t, filepath.Join(dir, "hello.o"), filepath.Join(dir, "plain.o"))
}

// TestStoreReachesUpstreamAndReadThroughRefillsTheTier: a store through the node reaches
// pace-kv; after the node restarts with an empty memory tier, a rebuild hits through upstream
// read-through, and the next one is answered locally.
func TestStoreReachesUpstreamAndReadThroughRefillsTheTier(t *testing.T) {
	kvSrv, kvAddr := startKV(t, "s3cret")
	state := t.TempDir()
	n := startNode(t, state, "--upstream="+kvAddr, "--requirepass=s3cret", "--slots=0", "--listen-raft=")
	dir := project(t)
	args := []string{"gcc", "-O2", "-c", "hello.c", "-o", "hello.o"}
	if r := cc(t, dir, []string{"HOME=" + t.TempDir(), "PACE_ADDR=" + n.addr}, args...); r.status != 0 {
		t.Fatal(r.stderr)
	}
	kvMetrics := "http://" + kvSrv.MetricsAddr().String() + "/metrics"
	waitFor(t, "the stores upstream", func() bool { return scrape(t, kvMetrics, "pace_items") >= 2 })
	n.stop()
	n2 := startNode(t, state, "--upstream="+kvAddr, "--requirepass=s3cret", "--slots=0", "--listen-raft=")
	env := []string{"HOME=" + t.TempDir(), "PACE_ADDR=" + n2.addr} // a fresh user: no local manifest copies
	if r := cc(t, dir, env, args...); r.status != 0 || !strings.Contains(r.stderr, "HIT") {
		t.Fatalf("rebuild after the tier was emptied: %s", r.stderr)
	}
	if n2.metric("pace_node_cache_upstream_hits_total") < 2 {
		t.Fatal("the rebuild was not read through the upstream")
	}
	before := n2.metric("pace_node_cache_upstream_hits_total")
	if r := cc(t, dir, env, args...); !strings.Contains(r.stderr, "HIT") {
		t.Fatal(r.stderr)
	}
	if n2.metric("pace_node_cache_upstream_hits_total") != before || n2.metric("pace_node_cache_hits_total") < 1 {
		t.Fatal("the refilled tier did not answer locally")
	}
}

func TestUpstreamDeadBuildsStillPass(t *testing.T) {
	n := startNode(t, t.TempDir(), "--upstream=127.0.0.1:"+freePort(t), "--slots=0", "--listen-raft=")
	dir := project(t)
	for i := 0; i < 2; i++ {
		if r := cc(t, dir, []string{"HOME=" + t.TempDir(), "PACE_ADDR=" + n.addr}, "gcc", "-c", "hello.c", "-o", "hello.o"); r.status != 0 {
			t.Fatalf("build %d with the upstream dead: %s", i, r.stderr)
		}
	}
	waitFor(t, "the failed offer counted", func() bool { return n.metric("pace_node_cache_upstream_store_failures_total") >= 1 })
}

// TestRestartKeepsIdentityRosterAndCachedObjects: the key, the cluster and the disk tier all
// survive a stop and a start.
func TestRestartKeepsIdentityRosterAndCachedObjects(t *testing.T) {
	state, cacheDir := t.TempDir(), t.TempDir()
	flags := []string{"--cache-dir=" + cacheDir, "--cache-memory=0", "--slots=0", "--listen-raft="}
	n := startNode(t, state, flags...)
	dir := project(t)
	env := []string{"HOME=" + t.TempDir(), "PACE_ADDR=" + n.addr}
	cc(t, dir, env, "gcc", "-c", "hello.c", "-o", "hello.o")
	firstLog := n.log.String()
	if code := n.stop(); code != 0 {
		t.Fatalf("stop exited %d", code)
	}
	n2 := startNode(t, state, flags...)
	if r := cc(t, dir, []string{"HOME=" + t.TempDir(), "PACE_ADDR=" + n2.addr}, "gcc", "-c", "hello.c", "-o", "hello.o"); !strings.Contains(r.stderr, "HIT") {
		t.Fatalf("cached object lost across a restart: %s", r.stderr)
	}
	key := between(firstLog, "identity key ", " ")
	cluster := between(firstLog, "cluster=", " ")
	if key == "" || !strings.Contains(n2.log.String(), "identity key "+key+" (recorded)") || !strings.Contains(n2.log.String(), "cluster="+cluster) {
		t.Fatalf("identity or cluster changed across a restart:\n%s\n---\n%s", firstLog, n2.log)
	}
}

func between(s, from, to string) string {
	_, rest, ok := strings.Cut(s, from)
	if !ok {
		return ""
	}
	v, _, _ := strings.Cut(rest, to)
	return v
}
