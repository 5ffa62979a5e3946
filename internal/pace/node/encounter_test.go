package node

import (
	"testing"

	"github.com/buildfleet/buildfleet/internal/pace/verbs"
	"pgregory.net/rapid"
)

func sum(cluster string, state uint8, created uint64) verbs.FleetSummary {
	return verbs.FleetSummary{ClusterID: cluster, State: state, CreatedAt: created}
}

func TestEncounterTable(t *testing.T) {
	const (
		solo  = verbs.FleetSolitary
		est   = verbs.FleetEstablished
		pend  = verbs.FleetPending
		older = 1000
		newer = 2000
	)
	for name, tc := range map[string]struct {
		self, other verbs.FleetSummary
		pin         string
		want        verdict
	}{
		"the same cluster":                           {sum("a", solo, newer), sum("a", est, older), "", ignore},
		"solitary meets an established fleet":        {sum("a", solo, older), sum("b", est, newer), "", yield},
		"an established fleet meets a solitary":      {sum("a", est, newer), sum("b", solo, older), "", ignore},
		"two established fleets":                     {sum("a", est, older), sum("b", est, newer), "", foreignVisible},
		"the younger of two solitaries yields":       {sum("a", solo, newer), sum("b", solo, older), "", yield},
		"the older of two solitaries stays":          {sum("b", solo, older), sum("a", solo, newer), "", ignore},
		"equal times: the higher cluster id":         {sum("b", solo, older), sum("a", solo, older), "", yield},
		"equal times: the lower cluster id stays":    {sum("a", solo, older), sum("b", solo, older), "", ignore},
		"an unknown creation counts oldest":          {sum("a", solo, newer), sum("b", solo, 0), "", yield},
		"an unknown self counts oldest":              {sum("a", solo, 0), sum("b", solo, older), "", ignore},
		"a pending node points at its fleet":         {sum("a", solo, older), sum("b", pend, newer), "", yield},
		"a pending self asks nobody else":            {sum("a", pend, newer), sum("b", est, older), "", ignore},
		"pinned elsewhere":                           {sum("a", solo, older), sum("b", est, newer), "c", refusedPin},
		"pinned to it":                               {sum("a", solo, older), sum("b", est, newer), "b", yield},
		"a pointer is checked against the pin later": {sum("a", solo, older), sum("b", pend, newer), "c", yield},
	} {
		if got := encounter(tc.self, tc.other, tc.pin); got != tc.want {
			t.Errorf("%s: %v, want %v", name, got, tc.want)
		}
	}
}

// TestPropertyTwoSolitariesNeverBothYield: of any two different clusters of one, exactly one
// yields to the other, so two laptops on a segment end in one fleet, never in a standoff or a
// swap.
func TestPropertyTwoSolitariesNeverBothYield(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		a := sum(rapid.StringMatching(`[0-9a-f]{8}`).Draw(t, "a"), verbs.FleetSolitary, rapid.Uint64Range(0, 5).Draw(t, "ta"))
		b := sum(rapid.StringMatching(`[0-9a-f]{8}`).Draw(t, "b"), verbs.FleetSolitary, rapid.Uint64Range(0, 5).Draw(t, "tb"))
		if a.ClusterID == b.ClusterID {
			t.Skip("one cluster")
		}
		ab, ba := encounter(a, b, "") == yield, encounter(b, a, "") == yield
		if ab == ba {
			t.Fatalf("a yields %v, b yields %v", ab, ba)
		}
	})
}
