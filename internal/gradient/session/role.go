package session

// Role is what every role value offers a driver; S is the role's own type (Authority, Peer,
// Dialer or Dialed), so one generic driver loop serves all four:
//
//	func drive[S session.Role[S]](role S, out session.Output, ...) { ... role, out = role.Step(ev) ... }
type Role[S any] interface {
	// Step returns the next value and what the driver must do. It never panics and never
	// blocks; the receiver is not modified.
	Step(Event) (S, Output)
	// Running reports whether the handshake finished and the session is live.
	Running() bool
	// Result is the current outcome: negotiated capabilities and grants (zero before Running).
	Result() Result
	// Done reports how the session ended, once it has.
	Done() (End, bool)
}

// Stepper is a running role with its type erased, for code that holds whichever role its
// session runs: a worker's job loop (Peer or Dialed), a server's reauth rounds (Authority or
// Dialer). Erase wraps one.
type Stepper interface {
	Step(Event) (Stepper, Output)
}

type erased[S Role[S]] struct{ role S }

func (e erased[S]) Step(ev Event) (Stepper, Output) {
	next, out := e.role.Step(ev)
	return erased[S]{next}, out
}

// Erase wraps a role as a Stepper.
func Erase[S Role[S]](role S) Stepper { return erased[S]{role} }

var (
	_ Role[Authority] = Authority{}
	_ Role[Peer]      = Peer{}
	_ Role[Dialer]    = Dialer{}
	_ Role[Dialed]    = Dialed{}
)

// OfflineReason applies the gradient-protocol §4.4 bookkeeping rule to a server role's End: whether
// the server keeps it as the worker's offline reason (the last failure of every worker ID, in
// memory), and the text to keep. Refusals, received rejections and protocol errors are failures;
// draining, redialing and driver faults are not. A failure before the token check is kept only for
// a registered worker ID, so unknown IDs cannot fill the map.
func OfflineReason(e End) (workerID, reason string, keep bool) {
	switch e.Kind {
	case EndRejectSent, EndRejectReceived, EndProtocolError, EndViolation:
	default:
		return "", "", false
	}
	if !KeepFailure(e.WorkerID, e.BeforeTokenCheck, e.Registered) {
		return "", "", false
	}
	return e.WorkerID, e.String(), true
}

// KeepFailure is the bookkeeping rule itself (gradient-protocol §4.4): a failure is worth
// remembering for a known worker ID when it happened at or after the token check, or when the ID is
// registered. Drivers use it directly for failures outside the handshake machine, such as a failed
// version agreement on a session the server dialed (gradient-protocol §1.2).
func KeepFailure(workerID string, beforeTokenCheck, registered bool) bool {
	return workerID != "" && (!beforeTokenCheck || registered)
}
