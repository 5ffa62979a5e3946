package node

import (
	"sync/atomic"

	"github.com/buildfleet/buildfleet/internal/pace/counter"
	"github.com/buildfleet/buildfleet/internal/pace/identity"
)

// counters are the node's own: admission and tickets, which no component below it sees.
type counters struct {
	requestsRefusedKeyRevoked atomic.Uint64
	requestsRefusedNotAMember atomic.Uint64
	operatorStandingRequired  atomic.Uint64
	ticketsAccepted           atomic.Uint64
	ticketsMinted             atomic.Uint64
	ticketsRefused            [16]atomic.Uint64 // by identity.TicketReason
	mintsRefusedNotLocal      atomic.Uint64
	mintsRefusedMalformed     atomic.Uint64
	mintsRefusedNoRandom      atomic.Uint64
	endpointChanges           atomic.Uint64
	raftEndpointChanges       atomic.Uint64
	formationYieldsRefusedPin atomic.Uint64
	formationJoins            atomic.Uint64
}

func (c *counters) metrics() []counter.Metric {
	m := []counter.Metric{
		{Name: "pace_node_requests_refused_key_revoked_total", Help: "Requests refused because the caller presented a key the cluster revoked (by proof or ticket).", Value: &c.requestsRefusedKeyRevoked},
		{Name: "pace_node_requests_refused_not_a_member_total", Help: "Scheduler and status requests refused not-a-member: no admission route.", Value: &c.requestsRefusedNotAMember},
		{Name: "pace_scheduler_requests_refused_operator_standing_required_total", Help: "Cluster-deciding requests from an identified machine that is not a voter.", Value: &c.operatorStandingRequired},
		{Name: identity.TicketsAcceptedCounter, Help: "Machine tickets accepted.", Value: &c.ticketsAccepted},
		{Name: identity.TicketsMintedCounter, Help: "Machine tickets minted for this machine's clients.", Value: &c.ticketsMinted},
		{Name: "pace_node_ticket_mints_refused_not_local_total", Help: "MINT-TICKET from a caller that is not this machine.", Value: &c.mintsRefusedNotLocal},
		{Name: "pace_node_ticket_mints_refused_malformed_total", Help: "MINT-TICKET naming no usable audience (loopback, wildcard, no host).", Value: &c.mintsRefusedMalformed},
		{Name: "pace_node_ticket_mints_refused_no_random_total", Help: "MINT-TICKET refused: the random source failed.", Value: &c.mintsRefusedNoRandom},
		{Name: "pace_node_endpoint_changes_total", Help: "Times the advertised endpoint moved (an auto address re-derived, or a reload).", Value: &c.endpointChanges},
		{Name: "pace_node_raft_endpoint_changes_total", Help: "Times this node's consensus endpoint moved (an auto address re-derived).", Value: &c.raftEndpointChanges},
		{Name: "pace_formation_yields_refused_pin_total", Help: "Fleets a --fleet-seed named that this node did not ask to join: not the cluster or key --fleet-id pins.", Value: &c.formationYieldsRefusedPin},
		{Name: "pace_formation_joins_total", Help: "Times this node was admitted by the fleet it asked and became its learner.", Value: &c.formationJoins},
	}
	for _, r := range identity.TicketReasons() {
		m = append(m, counter.Metric{Name: r.Counter(), Help: "Machine tickets refused: " + r.Error() + ".", Value: &c.ticketsRefused[r]})
	}
	return m
}
