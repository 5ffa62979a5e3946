package fleet

import (
	"fmt"
	"testing"
)

// BenchmarkRosterRead is the read every request on every surface makes.
func BenchmarkRosterRead(b *testing.B) {
	s := fixture(b)
	k := testKey(1)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, ok := s.VoterKey("n1"); !ok || s.Revoked(k) {
				b.Fatal("roster read failed")
			}
		}
	})
}

// BenchmarkApplySet is the cost of one applied entry on a 256-member state
// (Apply copies the indexes: configuration changes are rare, reads are not).
func BenchmarkApplySet(b *testing.B) {
	s := mustApply(b, New(), Found{ClusterID: testCluster, ID: "n0", Key: testKey(0)})
	for i := 1; i < 256; i++ {
		s = mustApply(b, s, Admit{ID: fmt.Sprintf("n%d", i), Seat: Learner, RaftEndpoint: "10.0.0.1:6680", Key: testKey(byte(i))})
	}
	values := []string{"20min", "30min"}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		next, err := Apply(s, Set{Name: SettingLeaseLifetime, Value: values[i%2]})
		if err != nil {
			b.Fatal(err)
		}
		s = next
	}
}
