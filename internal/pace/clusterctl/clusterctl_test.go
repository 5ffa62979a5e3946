package clusterctl

import (
	"strings"
	"testing"

	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

const key = "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"

func TestAdmitOperands(t *testing.T) {
	for _, tc := range []struct {
		operand string
		learner bool
		fields  []string // nil: refused
		refusal string
	}{
		{"n2=10.0.0.2:6680@" + key, false, []string{"n2", "10.0.0.2:6680", key}, ""},
		{"n2=10.0.0.2:6680", true, []string{"n2", "10.0.0.2:6680", ""}, ""},
		{"n2=[fd00::2]:6680", false, []string{"n2", "[fd00::2]:6680", ""}, ""},
		{"n2=10.0.0.2", false, nil, "not host:port"},
		{"n2=10.0.0.2:", false, nil, "not host:port"},
		{"=10.0.0.2:6680", false, nil, "want <id>=<host>:<port>"},
		{"n2", false, nil, "want <id>=<host>:<port>"},
		{"n2=10.0.0.2:6680@short", false, nil, "the key"},
	} {
		v, err := Admit(tc.operand, tc.learner)
		if tc.fields == nil {
			if err == nil || !strings.Contains(err.Error(), tc.refusal) {
				t.Errorf("Admit(%q) = %v, want a refusal mentioning %q", tc.operand, err, tc.refusal)
			}
			continue
		}
		if err != nil {
			t.Errorf("Admit(%q): %v", tc.operand, err)
			continue
		}
		wantOp, wantSeat := wire.OpClusterAdmit, "voter"
		if tc.learner {
			wantOp, wantSeat = wire.OpClusterAdmitLearner, "learner"
		}
		if v.Op != wantOp || v.Seat != wantSeat || len(v.Fields) != 3 {
			t.Fatalf("Admit(%q) = %+v", tc.operand, v)
		}
		for i, f := range tc.fields {
			if string(v.Fields[i]) != f {
				t.Errorf("Admit(%q) field %d = %q, want %q", tc.operand, i, v.Fields[i], f)
			}
		}
	}
}

func TestSetRefusesUpstreamByName(t *testing.T) {
	if _, err := Set("upstream=kv:6674"); err == nil || !strings.Contains(err.Error(), "never a replicated setting") {
		t.Errorf("Set(upstream) = %v", err)
	}
	if _, err := Set("novalue"); err == nil {
		t.Error("Set without = accepted")
	}
	v, err := Set("lease-lifetime=2min")
	if err != nil || v.Op != wire.OpClusterSet || string(v.Fields[0]) != "lease-lifetime" || string(v.Fields[1]) != "2min" {
		t.Errorf("Set = %+v, %v", v, err)
	}
}
