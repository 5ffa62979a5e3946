package lease

import (
	"testing"
)

// BenchmarkVerify is the worker's cost per job: one parse, one signature
// verification, one spend. Goal: tens of microseconds, so checking a lease never
// costs a job more than a round trip would.
func BenchmarkVerify(b *testing.B) {
	f := newFixture()
	tokens := make([]string, b.N)
	for i := range tokens {
		f.claims.Serial = uint64(i)
		tokens[i] = f.token(b)
	}
	v := NewVerifier(b.N + 1)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, r := v.Verify(tokens[i], f.ctx); r != nil {
			b.Fatal(r)
		}
	}
}

// BenchmarkVerifyRefusedJunk is what a prober costs a worker.
func BenchmarkVerifyRefusedJunk(b *testing.B) {
	f := newFixture()
	v := NewVerifier(0)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, r := v.Verify("AAAA", f.ctx); r == nil {
			b.Fatal("junk accepted")
		}
	}
}

// BenchmarkIssue is the scheduler's signing cost per grant.
func BenchmarkIssue(b *testing.B) {
	f := newFixture()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		f.claims.Serial = uint64(i)
		if _, err := Issue(f.claims, f.signer); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkVerifyReply is pace-cc's cost per dispatched object (1 MiB).
func BenchmarkVerifyReply(b *testing.B) {
	object := make([]byte, 1<<20)
	sig := SignReply(workerKey, "0123456789abcdef0123456789abcdef", object)
	b.SetBytes(int64(len(object)))
	for i := 0; i < b.N; i++ {
		if err := VerifyReply(workerKey.Public(), "0123456789abcdef0123456789abcdef", object, sig); err != nil {
			b.Fatal(err)
		}
	}
}
