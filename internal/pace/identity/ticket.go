package identity

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"github.com/buildfleet/buildfleet/internal/pace/edkey"
	"io"
	"time"
	"unicode/utf8"

	"github.com/buildfleet/buildfleet/internal/pace/cachekey"
	"github.com/buildfleet/buildfleet/internal/pace/lease"
	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// Machine ticket parameters (pace-node §8.2, pace-wire §1.15.2).
const (
	TicketLifetime = time.Minute
	TicketNonceLen = 16
	MaxTicketLen   = 1024
	// TicketClockSlack is the skew allowed on either side of a ticket's
	// minute: the same five minutes leases allow.
	TicketClockSlack = lease.ClockSlack
)

// ErrTicketAudience refuses to mint for an audience no other machine
// could be: empty, no host, loopback or wildcard. It is a malformed frame
// on the wire (MINT-TICKET answers malformed-frame).
var ErrTicketAudience = fmt.Errorf("%w: a ticket's audience is the exact host:port another machine will dial", wire.ErrMalformedFrame)

// Ticket is a verified machine ticket.
type Ticket struct {
	MachineID string
	Audience  string
	ExpiresAt time.Time
}

// MintTicket mints a ticket for this node, naming the one endpoint it will
// be presented at (the MINT-TICKET verb, loopback callers only).
func (id *Identity) MintTicket(audience string, now time.Time) ([]byte, error) {
	return MintTicket(id.Key, id.NodeID, audience, now, rand.Reader)
}

// MintTicket is fieldlist[packed, signature] with packed =
// fieldlist[label, machineId, audience, u64 expiresAtUnixSeconds,
// nonce(16)], signed by key. A failing random source is ErrNoRandom.
func MintTicket(key *Key, machineID, audience string, now time.Time, random io.Reader) ([]byte, error) {
	if err := CheckDialable(audience); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrTicketAudience, err)
	}
	if err := ValidateNodeID(machineID); err != nil {
		return nil, fmt.Errorf("mint ticket: %w", err)
	}
	var nonce [TicketNonceLen]byte
	if _, err := io.ReadFull(random, nonce[:]); err != nil {
		return nil, fmt.Errorf("mint ticket: %w: %w", ErrNoRandom, err)
	}
	expires := wire.AppendU64Field(nil, uint64(now.Add(TicketLifetime).Unix()))[wire.FieldPrefixLen:]
	packed := wire.AppendLabelledMessage(nil, wire.LabelTicket, []byte(machineID), []byte(audience), expires, nonce[:])
	sig := ed25519Sign(key, packed)
	ticket := wire.AppendField(wire.AppendField(nil, packed), sig)
	if len(ticket) > MaxTicketLen {
		return nil, fmt.Errorf("mint ticket: %d bytes, over %d", len(ticket), MaxTicketLen)
	}
	return ticket, nil
}

// parsedTicket is a ticket whose shape is right but which is not verified.
type parsedTicket struct {
	packed, signature, nonce []byte
	machineID, audience      []byte
	expires                  uint64
}

func parseTicket(ticket []byte) (*parsedTicket, *TicketRefusal) {
	malformed := func(format string, args ...any) *TicketRefusal {
		return &TicketRefusal{Reason: TicketMalformed, Detail: fmt.Sprintf(format, args...)}
	}
	if len(ticket) == 0 || len(ticket) > MaxTicketLen {
		return nil, malformed("ticket of %d bytes (1..%d allowed)", len(ticket), MaxTicketLen)
	}
	var outer, inner [5][]byte
	f, err := wire.SplitFields(outer[:0], ticket, 2)
	if err != nil || len(f[1]) != ed25519.SignatureSize {
		return nil, malformed("not fieldlist[packed, signature(64)]")
	}
	p := &parsedTicket{packed: f[0], signature: f[1]}
	g, err := wire.SplitFields(inner[:0], p.packed, 5)
	if err != nil {
		return nil, malformed("packed claims are not five fields")
	}
	if !bytes.Equal(g[0], []byte(wire.LabelTicket)) {
		return nil, malformed("label is not %s", wire.LabelTicket)
	}
	if p.expires, err = wire.U64(g[3]); err != nil {
		return nil, malformed("expiry is not a u64")
	}
	if len(g[4]) != TicketNonceLen {
		return nil, malformed("nonce of %d bytes", len(g[4]))
	}
	p.machineID, p.audience, p.nonce = g[1], g[2], g[4]
	if len(p.machineID) == 0 || len(p.machineID) > MaxNodeIDLen || len(p.audience) == 0 || len(p.audience) > maxAddressLen {
		return nil, malformed("machine id of %d bytes or audience of %d bytes out of bounds", len(p.machineID), len(p.audience))
	}
	if !utf8.Valid(p.machineID) || !utf8.Valid(p.audience) {
		return nil, &TicketRefusal{Reason: TicketNotUTF8, Detail: "machine id or audience is not UTF-8"}
	}
	return p, nil
}

// VerifyTicket runs the checks of pace-node §8.2 in order and, when all pass,
// spends the ticket. thisEndpoint is the exact host:port this node is
// reached at on the surface the ticket was presented to. It reads no clock:
// now is passed in. A nil *TicketRefusal means accepted.
func VerifyTicket(ticket []byte, r lease.Roster, thisEndpoint string, now time.Time, spent *lease.SpentSet) (Ticket, *TicketRefusal) {
	p, refusal := parseTicket(ticket)
	if refusal != nil {
		return Ticket{}, refusal
	}
	if r == nil || !r.HasVoters() {
		return Ticket{}, &TicketRefusal{Reason: TicketNoRoster, Detail: "this node's applied fleet state names no voter yet"}
	}
	if refusal := checkTicketSigner(p, r); refusal != nil {
		return Ticket{}, refusal
	}
	t := Ticket{MachineID: string(p.machineID), Audience: string(p.audience)}
	if t.Audience != thisEndpoint {
		return Ticket{}, &TicketRefusal{Reason: TicketWrongAudience,
			Detail: fmt.Sprintf("machine %q minted it for %q; this node is %q", t.MachineID, t.Audience, thisEndpoint)}
	}
	expires, refusal := ticketExpiry(p.expires, now)
	if refusal != nil {
		return Ticket{}, refusal
	}
	t.ExpiresAt = expires
	return t, spendTicket(p, t, now, spent)
}

// checkTicketSigner: a live member, its signature, its key not revoked. A
// removed member's genuine signature counts as revoked, a stranger's as
// unknown or forged.
func checkTicketSigner(p *parsedTicket, r lease.Roster) *TicketRefusal {
	id := string(p.machineID)
	valid := func(key ed25519.PublicKey) bool {
		return len(key) == ed25519.PublicKeySize && ed25519.Verify(key, p.packed, p.signature)
	}
	key, member := r.MemberKey(id)
	if !member {
		if forgotten, ok := r.(lease.ForgottenKeys); ok {
			if old, ok := forgotten.ForgottenKey(id); ok && valid(old) {
				return &TicketRefusal{Reason: TicketRevoked, Detail: fmt.Sprintf("machine %q was forgotten and its key %s revoked", id, edkey.Text(old))}
			}
		}
		return &TicketRefusal{Reason: TicketUnknownMachine, Detail: fmt.Sprintf("no live member is named %q", id)}
	}
	if !valid(key) {
		return &TicketRefusal{Reason: TicketForged, Detail: fmt.Sprintf("the signature is not member %q's", id)}
	}
	if r.Revoked(key) {
		return &TicketRefusal{Reason: TicketRevoked, Detail: fmt.Sprintf("member %q signed with revoked key %s", id, edkey.Text(key))}
	}
	return nil
}

// ticketExpiry accepts an expiry within [now - slack, now + lifetime +
// slack]; the upper bound also keeps a far-future ticket out of the spent
// set, whose entries must age out.
func ticketExpiry(expires uint64, now time.Time) (time.Time, *TicketRefusal) {
	const farBeyondAnyClock = 1 << 62 // seconds; time.Unix stays exact below it
	if expires > farBeyondAnyClock || time.Unix(int64(expires), 0).After(now.Add(TicketLifetime+TicketClockSlack)) {
		return time.Time{}, &TicketRefusal{Reason: TicketExpired, Detail: "the ticket expires further ahead than a ticket lives; a clock is wrong"}
	}
	at := time.Unix(int64(expires), 0)
	if now.After(at.Add(TicketClockSlack)) {
		return time.Time{}, &TicketRefusal{Reason: TicketExpired,
			Detail: fmt.Sprintf("the ticket expired %s ago (slack %s)", now.Sub(at).Truncate(time.Second), TicketClockSlack)}
	}
	return at, nil
}

func spendTicket(p *parsedTicket, t Ticket, now time.Time, spent *lease.SpentSet) *TicketRefusal {
	err := spent.Spend(ticketSpentID(p), t.ExpiresAt.Add(TicketClockSlack), now)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, lease.ErrAlreadySpent):
		return &TicketRefusal{Reason: TicketReplayed, Detail: fmt.Sprintf("machine %q presented a ticket already spent here", t.MachineID)}
	default:
		return &TicketRefusal{Reason: TicketSpentSetFull, Detail: fmt.Sprintf("%d unexpired tickets are held, the limit", spent.Capacity())}
	}
}

// ticketSpentID names a ticket in the spent set: a digest of its signed
// bytes (machine, audience, expiry, nonce).
func ticketSpentID(p *parsedTicket) [32]byte { return cachekey.Content(p.packed) }

// ed25519Sign signs an already labelled message (the ticket's packed
// field list begins with its label).
func ed25519Sign(key *Key, labelled []byte) []byte { return ed25519.Sign(key.private, labelled) }
