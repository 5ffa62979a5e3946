package identity

import (
	"crypto/rand"
	"testing"

	"github.com/buildfleet/buildfleet/internal/pace/lease"
	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// BenchmarkVerifyTicket is a node's cost per presented ticket.
func BenchmarkVerifyTicket(b *testing.B) {
	tickets := make([][]byte, b.N)
	for i := range tickets {
		t, err := MintTicket(laptopKey, "laptop", thisNode, ticketMintedAt, rand.Reader)
		if err != nil {
			b.Fatal(err)
		}
		tickets[i] = t
	}
	f := newTicketFixture()
	spent := lease.NewSpentSet(b.N + 1)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, r := VerifyTicket(tickets[i], f.roster, thisNode, f.now, spent); r != nil {
			b.Fatal(r)
		}
	}
}

func BenchmarkSign(b *testing.B) {
	field := make([]byte, 256)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		laptopKey.Sign(wire.LabelNodeProof, field)
	}
}

// BenchmarkParseKeyText includes the curve and small-order checks.
