package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/buildfleet/buildfleet/internal/pace/edkey"
)

func runNode(t *testing.T, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "PACE_NODE_AS_MAIN=1")
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	}
	return string(out), code
}

func TestPrintSurfacesBindsNothingAndJudges(t *testing.T) {
	out, code := runNode(t, "--print-surfaces", "--cluster-dir="+t.TempDir(), "--listen-node=16999")
	if code != 0 || !strings.Contains(out, "node              0.0.0.0:16999") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	out, code = runNode(t, "--print-surfaces", "--cluster-dir="+t.TempDir(), "--listen-raft=")
	if code != 2 || !strings.Contains(out, "rule 4") || !strings.Contains(out, "node              0.0.0.0:6674") {
		t.Fatalf("a refused configuration: exit %d:\n%s", code, out)
	}
	if _, code := runNode(t, "--slots=lots"); code != 2 {
		t.Fatalf("a flag typo exits %d, want 2", code)
	}
}

func TestPrintIdentityMintsOnceAndPrintsTheAdmitLine(t *testing.T) {
	dir := t.TempDir()
	out, code := runNode(t, "--print-identity", "--cluster-dir="+dir, "--raft-self=10.0.0.1")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "node-id ") || !strings.HasPrefix(lines[1], "public-key ") {
		t.Fatalf("output:\n%s", out)
	}
	id, key := strings.TrimPrefix(lines[0], "node-id "), strings.TrimPrefix(lines[1], "public-key ")
	if _, err := edkey.Parse(key); err != nil {
		t.Fatalf("public key %q: %v", key, err)
	}
	if lines[2] != "cluster-admit "+id+"=10.0.0.1:6680@"+key {
		t.Fatalf("admit line %q", lines[2])
	}
	again, _ := runNode(t, "--print-identity", "--cluster-dir="+dir, "--raft-self=10.0.0.1")
	if again != out {
		t.Fatalf("the identity changed between runs:\n%s\n%s", out, again)
	}
	if fi, err := os.Stat(dir + "/node-key"); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("node-key mode: %v %v", fi.Mode(), err)
	}
}

func TestTheNodePortHeldByAnotherProcessRefusesTheStart(t *testing.T) {
	l, err := netListen()
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := strings.TrimPrefix(l.Addr().String(), "127.0.0.1:")
	out, code := runNode(t, "--cluster-dir="+t.TempDir(), "--listen-node=127.0.0.1:"+port, "--listen-raft=", "--slots=0")
	if code != 2 || !strings.Contains(out, "not free") {
		t.Fatalf("exit %d: %s", code, out)
	}
}

// TestPrintSurfacesTheMissionsOwnExample: the invocation pace-node's own documentation prints
// is accepted (exit 0) and maps both discovery sockets on the wildcard; pinning the reply port
// or turning discovery off shows in the same rows.
func TestPrintSurfacesTheMissionsOwnExample(t *testing.T) {
	example := []string{"--print-surfaces", "--cluster-dir=" + t.TempDir(), "--listen-node", "6675",
		"--advertise", "10.0.0.7:6675", "--fleet-open", "--node-id", "n1", "--listen-raft", "6680",
		"--raft-self", "10.0.0.7", "--discovery", "10.0.0.255:6681"}
	out, code := runNode(t, example...)
	for _, row := range []string{
		"mode: solitary (no cluster minted yet; the first start mints one)",
		"node              0.0.0.0:6675          TCP",
		"raft              0.0.0.0:6680          TCP",
		"discovery beacon  0.0.0.0:6681          UDP",
		"discovery reply   0.0.0.0:*             UDP, port chosen by the kernel at bind",
		"consensus endpoint  10.0.0.7:6680",
		"pinned to  none (--fleet-id unset: discovery is trust-on-first-use)",
	} {
		if code != 0 || !strings.Contains(out, row) {
			t.Fatalf("exit %d, want 0 and %q:\n%s", code, row, out)
		}
	}
	out, code = runNode(t, append(example, "--discovery-reply-port=7681")...)
	if code != 0 || !strings.Contains(out, "discovery reply   0.0.0.0:7681          UDP") {
		t.Fatalf("a pinned reply port: exit %d\n%s", code, out)
	}
	out, code = runNode(t, append(example, "--discovery-reply-port=6681")...)
	if code != 2 || !strings.Contains(out, "is the beacon port") {
		t.Fatalf("the reply port on the beacon port: exit %d\n%s", code, out)
	}
	out, code = runNode(t, append(example, "--discovery=off")...)
	if code != 0 || !strings.Contains(out, "discovery beacon  -                     not served: --discovery=off") {
		t.Fatalf("discovery off: exit %d\n%s", code, out)
	}
}
