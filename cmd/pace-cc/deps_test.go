package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestPaceCCStaysSmall keeps the front to what a hit needs: every package a program links
// costs it start-up time on every compile, so consensus, metrics, SQL, HTTP, compression,
// signatures, templates, the runtime's network poller and the whole of pace-cc-full stay out.
func TestPaceCCStaysSmall(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatal(err)
	}
	banned := []string{"go.etcd.io/raft", "go.etcd.io/bbolt", "github.com/prometheus/", "database/sql",
		"modernc.org/sqlite", "github.com/jackc/pgx", "net/http", "github.com/klauspost/compress",
		"github.com/pierrec/lz4", "crypto/ed25519", "html/template", "regexp", "os/exec",
		"github.com/buildfleet/buildfleet/internal/pace/wire", "github.com/buildfleet/buildfleet/internal/pace/cc",
		"github.com/buildfleet/buildfleet/internal/pace/ccstats", "github.com/buildfleet/buildfleet/internal/pace/kvclient"}
	for _, dep := range strings.Fields(string(out)) {
		for _, b := range banned {
			if dep == b || strings.HasPrefix(dep, b+"/") || (strings.HasSuffix(b, "/") && strings.HasPrefix(dep, b)) {
				t.Errorf("the pace-cc front depends on %s", dep)
			}
		}
		if dep == "net" {
			t.Error("the pace-cc front depends on net (its blocking socket needs only syscall and net/netip)")
		}
	}
}
