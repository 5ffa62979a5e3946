package identity

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/lease"
	"github.com/buildfleet/buildfleet/internal/pace/lease/leasetest"
	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

const (
	thisNode  = "10.0.0.5:6674"
	otherNode = "10.0.0.6:6674"
)

var ticketMintedAt = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// ticketFixture is one presentation of a ticket: what the minting machine
// signs and what the accepting node knows. Every field starts out good.
type ticketFixture struct {
	label, machineID, audience string
	expires                    uint64
	signer                     *Key
	roster                     *leasetest.Roster
	endpoint                   string
	now                        time.Time
	spent                      *lease.SpentSet
	preSpend, fillSpent        bool
	junk                       bool
}

var (
	laptopKey   = mustKey(11)
	voterKey    = mustKey(12)
	strangerKey = mustKey(13)
)

func mustKey(b byte) *Key {
	k, err := NewKey(fixedRandom(b))
	if err != nil {
		panic(err)
	}
	return k
}

func newTicketFixture() *ticketFixture {
	return &ticketFixture{
		label: wire.LabelTicket, machineID: "laptop", audience: thisNode,
		expires: uint64(ticketMintedAt.Add(TicketLifetime).Unix()), signer: laptopKey,
		roster:   leasetest.NewRoster("c1").AddVoter("n1", voterKey.Public()).AddLearner("laptop", laptopKey.Public()),
		endpoint: thisNode, now: ticketMintedAt.Add(10 * time.Second), spent: lease.NewSpentSet(0),
	}
}

// craft builds the ticket bytes exactly as MintTicket lays them out, but
// from whatever the fixture says.
func (f *ticketFixture) craft() []byte {
	if f.junk {
		return []byte("not a ticket at all")
	}
	expires := wire.AppendU64Field(nil, f.expires)[wire.FieldPrefixLen:]
	packed := wire.AppendLabelledMessage(nil, f.label, []byte(f.machineID), []byte(f.audience), expires, make([]byte, TicketNonceLen))
	sig := ed25519Sign(f.signer, packed)
	return wire.AppendField(wire.AppendField(nil, packed), sig)
}

func (f *ticketFixture) verify(t *testing.T) (Ticket, *TicketRefusal) {
	t.Helper()
	ticket := f.craft()
	if f.fillSpent {
		capacity := 1 // full once the stranger's id is in
		if f.preSpend {
			capacity++ // and once this ticket is too
		}
		f.spent = lease.NewSpentSet(capacity)
		if err := f.spent.Spend([32]byte{0xff}, f.now.Add(time.Hour), f.now); err != nil {
			t.Fatal(err)
		}
	}
	if f.preSpend {
		p, r := parseTicket(ticket)
		if r == nil {
			if err := f.spent.Spend(ticketSpentID(p), f.now.Add(time.Hour), f.now); err != nil {
				t.Fatal(err)
			}
		}
	}
	var roster lease.Roster = f.roster
	if f.roster == nil {
		roster = nil
	}
	return VerifyTicket(ticket, roster, f.endpoint, f.now, f.spent)
}

type ticketDefect struct {
	name  string
	want  TicketReason
	apply func(*ticketFixture)
}

// ticketDefectsInCheckOrder: one defect per check of pace-node §8.2, in order.
var ticketDefectsInCheckOrder = []ticketDefect{
	{"another construction's label", TicketMalformed, func(f *ticketFixture) { f.label = wire.LabelLease }},
	{"machine id not UTF-8", TicketNotUTF8, func(f *ticketFixture) { f.machineID = "lap\xfftop" }},
	{"no voter in the roster", TicketNoRoster, func(f *ticketFixture) { f.roster = leasetest.NewRoster("c1") }},
	{"unknown machine", TicketUnknownMachine, func(f *ticketFixture) { f.machineID = "ghost" }},
	{"forged signature", TicketForged, func(f *ticketFixture) { f.signer = strangerKey }},
	{"revoked key", TicketRevoked, func(f *ticketFixture) { f.roster.Revoke(laptopKey.Public()) }},
	{"minted for another node", TicketWrongAudience, func(f *ticketFixture) { f.audience = otherNode }},
	{"expired", TicketExpired, func(f *ticketFixture) { f.now = ticketMintedAt.Add(TicketLifetime + TicketClockSlack + time.Second) }},
	{"replayed", TicketReplayed, func(f *ticketFixture) { f.preSpend = true }},
	{"spent set full", TicketSpentSetFull, func(f *ticketFixture) { f.fillSpent = true }},
}

func TestVerifyTicketChecksInOrder(t *testing.T) {
	for i, d := range ticketDefectsInCheckOrder {
		t.Run(d.name, func(t *testing.T) {
			f := newTicketFixture()
			later := ticketDefectsInCheckOrder[i:]
			for j := len(later) - 1; j >= 0; j-- { // earlier defects win shared fields
				later[j].apply(f)
			}
			if _, r := f.verify(t); r == nil || r.Reason != d.want {
				t.Fatalf("with defects %d.. stacked: got %v, want %s", i, r, d.want.CounterSuffix())
			}
		})
	}
}

func TestVerifyTicketEachRefusalAlone(t *testing.T) {
	for _, d := range ticketDefectsInCheckOrder {
		t.Run(d.name, func(t *testing.T) {
			f := newTicketFixture()
			d.apply(f)
			_, r := f.verify(t)
			if r == nil || r.Reason != d.want || !errors.Is(r, d.want) {
				t.Fatalf("got %v, want %s", r, d.want.CounterSuffix())
			}
			if r.Wire().Code != wire.CodeTicketRefused {
				t.Fatalf("wire code %v, want ticket-refused", r.Wire().Code)
			}
		})
	}
}

func TestVerifyTicketAcceptsAndSpends(t *testing.T) {
	f := newTicketFixture()
	got, r := f.verify(t)
	if r != nil {
		t.Fatalf("good ticket refused: %v", r)
	}
	if got.MachineID != "laptop" || got.Audience != thisNode || !got.ExpiresAt.Equal(ticketMintedAt.Add(TicketLifetime)) {
		t.Fatalf("ticket %+v", got)
	}
	if _, r := VerifyTicket(f.craft(), f.roster, thisNode, f.now, f.spent); r == nil || r.Reason != TicketReplayed {
		t.Fatalf("second presentation: %v, want replayed", r)
	}
	if _, r := VerifyTicket(f.craft(), f.roster, thisNode, f.now, lease.NewSpentSet(0)); r != nil {
		t.Fatalf("another node's spent set must not hold it: %v", r)
	}
}

func TestVerifyTicketMoreRefusals(t *testing.T) {
	cases := []ticketDefect{
		{"junk", TicketMalformed, func(f *ticketFixture) { f.junk = true }},
		{"audience not UTF-8", TicketNotUTF8, func(f *ticketFixture) { f.audience = "10.0.0.5:66\xff" }},
		{"empty machine id", TicketMalformed, func(f *ticketFixture) { f.machineID = "" }},
		{"machine id too long", TicketMalformed, func(f *ticketFixture) { f.machineID = strings.Repeat("m", 65) }},
		{"nil roster", TicketNoRoster, func(f *ticketFixture) { f.roster = nil }},
		{"a voter's id, the laptop's key", TicketForged, func(f *ticketFixture) { f.machineID = "n1" }},
		{"forgotten machine, its own key", TicketRevoked, func(f *ticketFixture) { f.roster.Forget("laptop") }},
		{"forgotten machine's id, a stranger's key", TicketUnknownMachine, func(f *ticketFixture) {
			f.roster.Forget("laptop")
			f.signer = strangerKey
		}},
		{"expiry further ahead than a ticket lives", TicketExpired, func(f *ticketFixture) {
			f.expires = uint64(f.now.Add(TicketLifetime+TicketClockSlack).Unix()) + 1
		}},
		{"expiry at the end of time", TicketExpired, func(f *ticketFixture) { f.expires = ^uint64(0) }},
	}
	for _, d := range cases {
		t.Run(d.name, func(t *testing.T) {
			f := newTicketFixture()
			d.apply(f)
			if _, r := f.verify(t); r == nil || r.Reason != d.want {
				t.Fatalf("got %v, want %s", r, d.want.CounterSuffix())
			}
		})
	}
}

func TestVerifyTicketClockBoundaries(t *testing.T) {
	expiry := ticketMintedAt.Add(TicketLifetime)
	cases := []struct {
		name string
		now  time.Time
		ok   bool
	}{
		{"exactly at expiry plus slack", expiry.Add(TicketClockSlack), true},
		{"one second past it", expiry.Add(TicketClockSlack + time.Second), false},
		{"verifier's clock five minutes behind", ticketMintedAt.Add(-TicketClockSlack), true},
		{"verifier's clock further behind", ticketMintedAt.Add(-TicketClockSlack - time.Second), false},
	}
	for _, c := range cases {
		f := newTicketFixture()
		f.now = c.now
		_, r := f.verify(t)
		if c.ok != (r == nil) || (!c.ok && r.Reason != TicketExpired) {
			t.Errorf("%s: got %v, want ok=%v", c.name, r, c.ok)
		}
	}
}

func TestTamperedTicketIsNeverAccepted(t *testing.T) {
	good := newTicketFixture().craft()
	for i := range good {
		for _, bit := range []byte{0x01, 0x80} {
			f := newTicketFixture()
			tampered := append([]byte(nil), good...)
			tampered[i] ^= bit
			if _, r := VerifyTicket(tampered, f.roster, thisNode, f.now, f.spent); r == nil {
				t.Fatalf("byte %d ^ %#x accepted", i, bit)
			}
		}
	}
}

func TestMintTicket(t *testing.T) {
	id := &Identity{NodeID: "laptop", Key: laptopKey}
	ticket, err := id.MintTicket(thisNode, ticketMintedAt)
	if err != nil {
		t.Fatal(err)
	}
	if len(ticket) > MaxTicketLen {
		t.Fatalf("ticket of %d bytes", len(ticket))
	}
	f := newTicketFixture()
	if got, r := VerifyTicket(ticket, f.roster, thisNode, f.now, f.spent); r != nil || got.MachineID != "laptop" {
		t.Fatalf("minted ticket refused: %v", r)
	}
	again, _ := id.MintTicket(thisNode, ticketMintedAt)
	if _, r := VerifyTicket(again, f.roster, thisNode, f.now, f.spent); r != nil {
		t.Fatalf("a second ticket for the same audience is a new ticket (fresh nonce): %v", r)
	}
	for _, audience := range []string{"", "127.0.0.1:6674", "localhost:6674", "[::1]:6674", "0.0.0.0:6674", ":6674", "10.0.0.5"} {
		_, err := id.MintTicket(audience, ticketMintedAt)
		if !errors.Is(err, ErrTicketAudience) || !errors.Is(err, wire.ErrMalformedFrame) {
			t.Errorf("audience %q: got %v, want ErrTicketAudience (malformed-frame)", audience, err)
		}
	}
	if _, err := MintTicket(laptopKey, "laptop", thisNode, ticketMintedAt, failingRandom{}); !errors.Is(err, ErrNoRandom) {
		t.Errorf("failing random: got %v, want ErrNoRandom", err)
	}
}

func TestTicketCountersAndClientMessages(t *testing.T) {
	want := []string{"malformed", "not_utf8", "no_roster", "unknown_machine", "forged", "revoked",
		"wrong_audience", "expired", "replayed", "spent_set_full"}
	reasons := TicketReasons()
	if len(reasons) != len(want) {
		t.Fatalf("%d reasons, want %d", len(reasons), len(want))
	}
	for i, r := range reasons {
		if r.CounterSuffix() != want[i] || r.Counter() != "pace_node_tickets_refused_"+want[i]+"_total" {
			t.Errorf("reason %d: %q %q", i, r.CounterSuffix(), r.Counter())
		}
	}
	// A stranger learns nothing about which ids or keys exist.
	hidden := map[TicketReason]bool{TicketUnknownMachine: true, TicketForged: true, TicketRevoked: true}
	for _, r := range reasons {
		msg := (&TicketRefusal{Reason: r, Detail: "machine laptop"}).Wire().Message
		if hidden[r] != (msg == "not admitted by this node") || strings.Contains(msg, "laptop") {
			t.Errorf("%s tells the presenter %q", r.CounterSuffix(), msg)
		}
	}
}
