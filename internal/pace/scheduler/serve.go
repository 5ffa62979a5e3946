package scheduler

import (
	"errors"

	"github.com/buildfleet/buildfleet/internal/pace/verbs"
	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// Serve answers one scheduler verb from its fields (split with the verb's
// exact arity): it parses, counts a refused body, decides, and returns the
// Ok payload appended to dst. A refusal is returned as an error; RefusalOf
// gives the reply for it. Ops it does not serve are ErrNotScheduler.
//
// Parse faults are counted per family: LEASE and RELEASE in
// `…_leases_{malformed,field_too_long}_total`; REGISTER, HEARTBEAT and
// WITHDRAW in `…_registrations_{malformed,field_too_long}_total`;
// NODE-ANNOUNCE bounds in `…_node_announcements_field_too_long_total`.
func (s *Scheduler) Serve(dst []byte, op wire.Op, fields [][]byte, caller Caller, p Params) ([]byte, error) {
	if joining(op) && caller.NodeID == "" {
		s.counters.RefusedNodeIdentityRequired.Add(1)
		return dst, ErrIdentityRequired
	}
	switch op {
	case wire.OpLease:
		return s.serveLease(dst, fields, p)
	case wire.OpRelease:
		req, err := verbs.ParseRelease(fields)
		if err != nil {
			return dst, s.countParse(op, err)
		}
		return dst, s.Release(req)
	case wire.OpRegister:
		req, err := verbs.ParseRegister(fields)
		if err != nil {
			return dst, s.countParse(op, err)
		}
		ok, err := s.Register(req, caller, p)
		if err != nil {
			return dst, err
		}
		return ok.Append(dst), nil
	}
	return dst, s.serveUpkeep(op, fields, caller)
}

// ErrNotScheduler: Serve was handed an op that is not a scheduler verb.
var ErrNotScheduler = errors.New("scheduler: not a scheduler verb")

func (s *Scheduler) serveLease(dst []byte, fields [][]byte, p Params) ([]byte, error) {
	req, err := verbs.ParseLease(fields)
	if err != nil {
		return dst, s.countParse(wire.OpLease, err)
	}
	grant, err := s.Lease(req, p)
	if err != nil {
		return dst, err
	}
	return grant.Append(dst), nil
}

// serveUpkeep answers the verbs whose Ok body is empty.
func (s *Scheduler) serveUpkeep(op wire.Op, fields [][]byte, caller Caller) error {
	switch op {
	case wire.OpHeartbeat:
		req, err := verbs.ParseHeartbeat(fields)
		if err != nil {
			return s.countParse(op, err)
		}
		return s.Heartbeat(req, caller)
	case wire.OpWithdraw:
		req, err := verbs.ParseWithdraw(fields)
		if err != nil {
			return s.countParse(op, err)
		}
		return s.Withdraw(req, caller)
	case wire.OpNodeAnnounce:
		req, err := verbs.ParseAnnounce(fields)
		if err != nil {
			return s.countParse(op, err)
		}
		return s.Announce(req, caller)
	}
	return ErrNotScheduler
}

// joining reports the verbs that need a proven node identity (pace-node §6.1).
func joining(op wire.Op) bool {
	switch op {
	case wire.OpRegister, wire.OpHeartbeat, wire.OpWithdraw, wire.OpNodeAnnounce:
		return true
	}
	return false
}

// countParse counts a refused body in its family's counter.
func (s *Scheduler) countParse(op wire.Op, err error) error {
	long := verbs.IsTooLong(err)
	switch {
	case op == wire.OpLease || op == wire.OpRelease:
		either(long, &s.counters.LeasesFieldTooLong, &s.counters.LeasesMalformed).Add(1)
	case op == wire.OpNodeAnnounce:
		if long {
			s.counters.AnnouncementsFieldTooLong.Add(1)
		}
	default:
		either(long, &s.counters.RegistrationsFieldTooLong, &s.counters.RegistrationsMalformed).Add(1)
	}
	return err
}

func either[T any](cond bool, yes, no T) T {
	if cond {
		return yes
	}
	return no
}

// RefusalOf is the Error reply for an error Serve (or any method here)
// returned. A signing failure is answered no-capacity: the client
// compiles locally, and no refusal names a scheduler fault better.
func RefusalOf(err error) (wire.Refusal, bool) {
	if r, ok := codeOf(err); ok {
		return r, true
	}
	if errors.Is(err, ErrSign) {
		return wire.Refuse(wire.CodeNoCapacity, "the scheduler could not sign a lease"), true
	}
	return verbs.RefusalOf(err)
}
