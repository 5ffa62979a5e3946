package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestPaceCCStaysSmall keeps consensus, metrics and SQL out of the binary every compile starts.
func TestPaceCCStaysSmall(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, banned := range []string{"go.etcd.io/raft", "go.etcd.io/bbolt", "github.com/prometheus/", "database/sql", "modernc.org/sqlite", "github.com/jackc/pgx", "net/http"} {
			if strings.HasPrefix(dep, banned) {
				t.Errorf("pace-cc depends on %s", dep)
			}
		}
	}
}
