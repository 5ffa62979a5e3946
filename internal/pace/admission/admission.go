// Package admission is the fold that decides whether a caller may use a node's scheduler and
// compile verbs (pace-node §8.1): loopback, a proven live key, a machine ticket
// for this endpoint, and --fleet-open each admit; a revoked key refuses and outranks them all.
// The answer is about the caller's machine, never its address: no source address admits
// anybody but this machine.
//
// It is pure and asked on every request: nothing caches an admission decision, so a forget
// reaches every open connection at its next request.
package admission

// Route is one way a caller was admitted, as the bits EXPLAIN-ADMISSION reports
// (pace-wire §1.13).
type Route uint32

// Routes.
const (
	FleetOpen  Route = 0x08
	ProvenKey  Route = 0x10
	RevokedKey Route = 0x20
	Loopback   Route = 0x40
	Ticket     Route = 0x80
)

// Facts are what the node knows about one request's caller.
type Facts struct {
	Loopback bool // the peer address is this machine's loopback
	// Proven: the connection completed a node proof with a key the roster holds live.
	Proven bool
	// Ticket: an AUTH on this connection presented a valid ticket for this endpoint.
	Ticket bool
	// Revoked: the caller presented a revoked key, by proof or by ticket.
	Revoked bool
	// FleetOpen is this node's --fleet-open.
	FleetOpen bool
	// Voter: the proven or ticket key belongs to a live voter (operator standing).
	Voter bool
}

// Verdict is the fold's answer.
type Verdict struct {
	Admitted bool
	// Routes lists every route that admitted, plus RevokedKey when a revoked key refused.
	Routes Route
	// Identified: admitted by something other than --fleet-open alone (loopback, proof or
	// ticket). Cluster-deciding verbs need it.
	Identified bool
	// Operator: loopback, or the proven or ticket key of a voter. The "op" gate of
	// pace-wire §1.12.
	Operator bool
}

// Decide folds the facts. A revoked key refuses whatever else holds (pace-node §8.1): under
// --fleet-open a forgotten machine presenting its key is refused where the same machine
// presenting nothing would be served as anonymous.
func Decide(f Facts) Verdict {
	if f.Revoked {
		return Verdict{Routes: RevokedKey}
	}
	var v Verdict
	if f.Loopback {
		v.Routes |= Loopback
	}
	if f.Proven {
		v.Routes |= ProvenKey
	}
	if f.Ticket {
		v.Routes |= Ticket
	}
	v.Identified = v.Routes != 0
	if f.FleetOpen {
		v.Routes |= FleetOpen
	}
	v.Admitted = v.Routes != 0
	v.Operator = f.Loopback || ((f.Proven || f.Ticket) && f.Voter)
	return v
}

// Policy names the admission policy for the ready line (pace-node §10.4).
func Policy(hasRoster, fleetOpen bool) string {
	switch {
	case fleetOpen:
		return "every caller (--fleet-open); revoked keys refused"
	case hasRoster:
		return "this machine and machines the roster admits (proof or ticket)"
	}
	return "this machine only (no roster, no --fleet-open)"
}
