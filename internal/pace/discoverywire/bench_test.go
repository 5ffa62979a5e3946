package discoverywire

import "testing"

// What a receiver spends per datagram before and after the budgets: parsing is paid for
// every datagram heard, verification only within the signature budget.

func BenchmarkParseBeacon(b *testing.B) {
	beacon := genuineExchange(b).beacon
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(beacon); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseAndVerifyProof(b *testing.B) {
	proof := genuineExchange(b).proof
	b.ReportAllocs()
	for b.Loop() {
		d, err := Parse(proof)
		if err != nil || !d.Proof.Verify("c-red") {
			b.Fatal(err)
		}
	}
}

func BenchmarkSignProof(b *testing.B) {
	k, s, c := testKey(b, 1), sampleSummary(), sampleChallenge()
	b.ReportAllocs()
	for b.Loop() {
		AppendProof(nil, SignProof(k, c, s))
	}
}
