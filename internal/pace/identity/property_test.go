package identity

import (
	"crypto/rand"
	"fmt"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/buildfleet/buildfleet/internal/pace/lease"
)

// TestTicketRoundTrip: a ticket minted for any dialable IPv4 endpoint is
// accepted there at any moment inside its window, and refused at any other
// endpoint.
func TestTicketRoundTrip(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		octets := rapid.SliceOfN(rapid.IntRange(1, 254), 4, 4).Draw(rt, "octets")
		if octets[0] == 127 {
			octets[0] = 10
		}
		audience := fmt.Sprintf("%d.%d.%d.%d:%d", octets[0], octets[1], octets[2], octets[3], rapid.IntRange(1, 65535).Draw(rt, "port"))
		minted := time.Unix(rapid.Int64Range(0, 1<<40).Draw(rt, "mintedAt"), 0)
		offset := time.Duration(rapid.Int64Range(int64(-TicketClockSlack), int64(TicketLifetime+TicketClockSlack)).Draw(rt, "offset"))
		ticket, err := MintTicket(laptopKey, "laptop", audience, minted, rand.Reader)
		if err != nil {
			rt.Fatalf("mint for %s: %v", audience, err)
		}
		roster := newTicketFixture().roster
		if got, r := VerifyTicket(ticket, roster, audience, minted.Add(offset), lease.NewSpentSet(0)); r != nil || got.Audience != audience {
			rt.Fatalf("verify at %s, %s after minting: %v", audience, offset, r)
		}
		if _, r := VerifyTicket(ticket, roster, audience+"0", minted.Add(offset), lease.NewSpentSet(0)); r == nil || r.Reason != TicketWrongAudience {
			rt.Fatalf("accepted at another endpoint: %v", r)
		}
	})
}
