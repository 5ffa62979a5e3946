package scheduler

// Outcome is how one LEASE was decided, as Config.Decided hears it: a grant or the cause of a
// refusal. Every refusal sends the client to compile locally.
type Outcome uint8

// The outcomes, in the order of the decision (pace-node §6.2).
const (
	Granted                Outcome = iota
	RefusedAlreadyInFlight         // a live lease holds the key
	RefusedNoWorker                // no live worker has the fingerprint
	RefusedAllExcluded             // every match is on the client's exclusion list (no-worker on the wire)
	RefusedNoCapacity              // every match is full of the fleet's own work
	RefusedWithdrawn               // matches free on paper but pulled back
	RefusedSignFailed              // the grant could not be signed (ErrSign)
	Outcomes                       // how many there are
)

// decided tells Config.Decided, outside the lock.
func (s *Scheduler) decided(o Outcome) {
	if s.cfg.Decided != nil {
		s.cfg.Decided(o)
	}
}
