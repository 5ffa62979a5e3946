package identity

import "github.com/buildfleet/buildfleet/internal/pace/wire"

// TicketReason is why a node refused a machine ticket (pace-node §8.2). Each
// has its own counter, pace_node_tickets_refused_<suffix>_total. A TicketReason
// is an error, so errors.Is(err, identity.TicketExpired) works.
type TicketReason uint8

// Ticket refusals, in the order the checks run.
const (
	TicketMalformed      TicketReason = iota + 1 // does not parse, too long, wrong label or widths
	TicketNotUTF8                                // machine id or audience not UTF-8
	TicketNoRoster                               // this node's applied state names no voter yet
	TicketUnknownMachine                         // no live member holds that id
	TicketForged                                 // the signature is not the member's
	TicketRevoked                                // signed by a key the cluster revoked
	TicketWrongAudience                          // minted for another endpoint
	TicketExpired                                // outside its minute, give or take the slack
	TicketReplayed                               // already spent at this node
	TicketSpentSetFull                           // the spent set is full of live tickets
)

// Counter names outside the refusal family.
const (
	TicketsAcceptedCounter = "pace_node_tickets_accepted_total"
	TicketsMintedCounter   = "pace_node_tickets_minted_total"
)

type ticketRow struct {
	suffix string
	// client is what the presenter is told: forged, unknown and revoked
	// all read "not admitted by this node"; the others name themselves.
	client string
}

var ticketTable = [...]ticketRow{
	TicketMalformed:      {"malformed", "the machine ticket is malformed"},
	TicketNotUTF8:        {"not_utf8", "the machine ticket's text is not UTF-8"},
	TicketNoRoster:       {"no_roster", "this node has not applied its fleet's roster yet"},
	TicketUnknownMachine: {"unknown_machine", "not admitted by this node"},
	TicketForged:         {"forged", "not admitted by this node"},
	TicketRevoked:        {"revoked", "not admitted by this node"},
	TicketWrongAudience:  {"wrong_audience", "the machine ticket was minted for another endpoint"},
	TicketExpired:        {"expired", "the machine ticket has expired (or a clock is wrong)"},
	TicketReplayed:       {"replayed", "the machine ticket was already used"},
	TicketSpentSetFull:   {"spent_set_full", "this node is holding too many recent tickets; try again shortly"},
}

var ticketCounters = func() (names [len(ticketTable)]string) {
	for r := range names {
		names[r] = "pace_node_tickets_refused_" + ticketTable[r].suffix + "_total"
	}
	return names
}()

// TicketReasons lists every reason, so a node can register each counter.
func TicketReasons() []TicketReason {
	rs := make([]TicketReason, 0, len(ticketTable)-1)
	for r := TicketMalformed; int(r) < len(ticketTable); r++ {
		rs = append(rs, r)
	}
	return rs
}

func (r TicketReason) valid() TicketReason {
	if r == 0 || int(r) >= len(ticketTable) {
		return TicketMalformed
	}
	return r
}

// Error is the reason's counter suffix in words.
func (r TicketReason) Error() string { return "ticket refused: " + ticketTable[r.valid()].suffix }

// CounterSuffix is e.g. "wrong_audience".
func (r TicketReason) CounterSuffix() string { return ticketTable[r.valid()].suffix }

// Counter is the exact counter name.
func (r TicketReason) Counter() string { return ticketCounters[r.valid()] }

// TicketRefusal is a refused ticket: the reason and a sentence for the
// node's log (which may name the machine; the presenter is told less).
type TicketRefusal struct {
	Reason TicketReason
	Detail string
}

func (r *TicketRefusal) Error() string { return r.Reason.Error() + ": " + r.Detail }

// Unwrap exposes the reason for errors.Is.
func (r *TicketRefusal) Unwrap() error { return r.Reason }

// Counter is the exact counter name this refusal increments.
func (r *TicketRefusal) Counter() string { return r.Reason.Counter() }

// Wire is the Error reply the presenter gets: ticket-refused, with a
// sentence that does not tell a stranger which ids or keys exist.
func (r *TicketRefusal) Wire() wire.Refusal {
	return wire.Refusal{Code: wire.CodeTicketRefused, Message: ticketTable[r.Reason.valid()].client}
}
