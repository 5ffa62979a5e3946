package consensus

import (
	"testing"

	"github.com/buildfleet/buildfleet/internal/pace/fleet"
)

// BenchmarkProposeSolitary is one command end to end on a cluster of one:
// validate, propose, one fsynced transaction, apply, answer.
func BenchmarkProposeSolitary(b *testing.B) {
	n := openBenchNode(b)
	values := []string{"20min", "30min"}
	ctx := b.Context()
	for i := 0; b.Loop(); i++ {
		if err := n.Propose(ctx, fleet.Set{Name: fleet.SettingLeaseLifetime, Value: values[i%2]}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRosterRead is what every request on every surface does.
func BenchmarkRosterRead(b *testing.B) {
	n := openBenchNode(b)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			st := n.State()
			if _, ok := st.VoterKey("n1"); !ok || !n.IsLeader() {
				b.Fatal("roster read failed")
			}
		}
	})
}
