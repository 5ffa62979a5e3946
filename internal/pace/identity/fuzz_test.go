package identity

import (
	"bytes"
	"crypto/ed25519"
	"testing"

	"github.com/buildfleet/buildfleet/internal/pace/lease"
	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// FuzzVerifyTicket: whatever bytes are presented, verification never
// panics, accepts only a ticket the laptop really signed for this node, and
// a ticket that parses has exactly one encoding.
func FuzzVerifyTicket(f *testing.F) {
	f.Add(newTicketFixture().craft())
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, ticket []byte) {
		fx := newTicketFixture()
		got, r := VerifyTicket(ticket, fx.roster, thisNode, fx.now, lease.NewSpentSet(0))
		p, parseRefusal := parseTicket(ticket)
		if parseRefusal == nil {
			again := wire.AppendField(wire.AppendField(nil, p.packed), p.signature)
			if !bytes.Equal(again, ticket) {
				t.Fatalf("ticket has a second encoding")
			}
		}
		if r != nil {
			if r.Reason == 0 || r.Counter() == "" {
				t.Fatalf("refusal without a reason: %+v", r)
			}
			return
		}
		if parseRefusal != nil || got.MachineID != "laptop" || got.Audience != thisNode ||
			!ed25519.Verify(laptopKey.Public(), p.packed, p.signature) {
			t.Fatalf("accepted a ticket the laptop did not sign for this node: %+v", got)
		}
	})
}
