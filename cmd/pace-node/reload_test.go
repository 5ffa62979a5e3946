package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/kv"
)

// TestReloadAppliesANewUpstreamPassword: the pace-kv behind a node rotates its password (it is
// restarted with the new one, so no connection stays verified under the old); the node's
// --config file gets the new secret and a SIGHUP; the next store reaches pace-kv again.
func TestReloadAppliesANewUpstreamPassword(t *testing.T) {
	kvSrv, kvAddr := startKV(t, "old-secret")
	conf := filepath.Join(t.TempDir(), "pace-node.yaml")
	writeConf := func(secret string) {
		body := "upstream: " + kvAddr + "\nrequirepass: " + secret + "\nslots: 0\nlisten-raft: \"\"\n"
		if err := os.WriteFile(conf, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	writeConf("old-secret")
	n := startNode(t, t.TempDir(), "--config="+conf)
	dir := project(t)
	build := func(name string) {
		t.Helper()
		src := filepath.Join(dir, name+".c")
		if err := os.WriteFile(src, []byte("int "+name+"(void) { return 1; }\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if r := cc(t, dir, []string{"HOME=" + t.TempDir(), "PACE_ADDR=" + n.addr}, "gcc", "-c", name+".c", "-o", name+".o"); r.status != 0 {
			t.Fatal(r.stderr)
		}
	}
	build("before")
	items := func(s *kv.Server) func() float64 {
		return func() float64 { return scrape(t, "http://"+s.MetricsAddr().String()+"/metrics", "pace_items") }
	}
	waitFor(t, "the stores upstream", func() bool { return items(kvSrv)() >= 2 })

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	kvSrv.Shutdown(ctx)
	rotated := restartKV(t, kvAddr, "new-secret")
	writeConf("new-secret")
	n.cmd.Process.Signal(syscall.SIGHUP)
	waitFor(t, "the reload", func() bool { return strings.Contains(n.log.String(), "upstream cache password changed") })
	build("after")
	waitFor(t, "a store under the new password", func() bool { return items(rotated)() >= 2 })
}

// restartKV starts an in-process pace-kv on a fixed loopback address.
func restartKV(t *testing.T, addr, password string) *kv.Server {
	t.Helper()
	srv, err := kv.New(kv.Config{Listen: addr, MetricsListen: "127.0.0.1:0", MaxMemory: 64 << 20, Password: password})
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	})
	return srv
}
