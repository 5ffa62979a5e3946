package admission

import (
	"testing"

	"pgregory.net/rapid"
)

// TestFold is pace-node §8.1's table, one row per route and the revoked
// override.
func TestFold(t *testing.T) {
	cases := []struct {
		name                string
		f                   Facts
		admitted, ident, op bool
		routes              Route
	}{
		{"nothing presented, no fleet-open", Facts{}, false, false, false, 0},
		{"loopback", Facts{Loopback: true}, true, true, true, Loopback},
		{"proven learner key", Facts{Proven: true}, true, true, false, ProvenKey},
		{"proven voter key", Facts{Proven: true, Voter: true}, true, true, true, ProvenKey},
		{"ticket", Facts{Ticket: true}, true, true, false, Ticket},
		{"voter ticket", Facts{Ticket: true, Voter: true}, true, true, true, Ticket},
		{"fleet-open anonymous", Facts{FleetOpen: true}, true, false, false, FleetOpen},
		{"every route lists itself", Facts{Loopback: true, Proven: true, Ticket: true, FleetOpen: true}, true, true, true,
			Loopback | ProvenKey | Ticket | FleetOpen},
		{"revoked key outranks loopback", Facts{Revoked: true, Loopback: true}, false, false, false, RevokedKey},
		{"revoked key outranks fleet-open", Facts{Revoked: true, FleetOpen: true}, false, false, false, RevokedKey},
	}
	for _, c := range cases {
		v := Decide(c.f)
		if v.Admitted != c.admitted || v.Identified != c.ident || v.Operator != c.op || v.Routes != c.routes {
			t.Errorf("%s: %+v", c.name, v)
		}
	}
}

func TestRevokedNeverAdmits(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		f := Facts{
			Loopback: rapid.Bool().Draw(t, "loopback"), Proven: rapid.Bool().Draw(t, "proven"),
			Ticket: rapid.Bool().Draw(t, "ticket"), FleetOpen: rapid.Bool().Draw(t, "open"),
			Voter: rapid.Bool().Draw(t, "voter"), Revoked: true,
		}
		if v := Decide(f); v.Admitted || v.Operator || v.Identified {
			t.Fatalf("revoked caller admitted: %+v", v)
		}
	})
}

func TestPolicySentences(t *testing.T) {
	if Policy(false, false) != "this machine only (no roster, no --fleet-open)" ||
		Policy(true, false) != "this machine and machines the roster admits (proof or ticket)" ||
		Policy(true, true) != "every caller (--fleet-open); revoked keys refused" {
		t.Fatal("policy sentences changed")
	}
}
