package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/buildfleet/buildfleet/internal/pace/ctl"
)

const otherKey = "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"

// pacectl explain-admission says which routes would admit a machine, and a forget turns the
// answer into a refusal by the revoked key.
func TestExplainAdmissionOfAMachine(t *testing.T) {
	n := startNode(t, t.TempDir(), "--slots=0")
	explain := func(subject ...string) string {
		t.Helper()
		var out bytes.Buffer
		if err := ctl.Run(context.Background(), append([]string{"--addr=" + n.addr, "explain-admission"}, subject...), &out); err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
	verb := func(args ...string) { t.Helper(); operator(t, n, args...) }
	if got := explain(); !strings.Contains(got, "decided-by: loopback (this machine)") {
		t.Errorf("the asking connection:\n%s", got)
	}
	verb("--cluster-admit-learner=n9=10.9.9.9:6680@" + otherKey)
	for _, subject := range []string{"n9", otherKey} {
		if got := explain(subject); !strings.Contains(got, "standing:   learner") || !strings.Contains(got, "decided-by: proven key, machine ticket") {
			t.Errorf("a learner, asked as %s:\n%s", subject, got)
		}
	}
	verb("--cluster-forget=n9")
	if got := explain("n9"); !strings.Contains(got, "verdict:    refused: its key is revoked") {
		t.Errorf("a forgotten machine:\n%s", got)
	}
	if got := explain("stranger"); !strings.Contains(got, "verdict:    not admitted") {
		t.Errorf("a stranger:\n%s", got)
	}
}

// operator runs a pace-node operator verb against n and returns its output.
func operator(t *testing.T, n *nodeProc, args ...string) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"--scheduler=" + n.addr}, args...)...)
	cmd.Env = append(os.Environ(), "PACE_NODE_AS_MAIN=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("pace-node %v: %v\n%s", args, err, out)
	}
	return string(out)
}
