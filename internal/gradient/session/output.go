package session

import (
	"slices"
	"strconv"

	"github.com/buildfleet/buildfleet/internal/gradient/wire"
)

// Status says what a step did and what the driver does next.
type Status uint8

const (
	// Continue: send Output.Send, answer Output.Need if set, otherwise read the next message.
	Continue Status = iota
	// Running: the handshake finished on this step; Output.Result holds its outcome. Any
	// later step may still carry a Need (a reauth queued during the handshake).
	Running
	// Reauthorized: a reauth round finished on this step (AuthUpdate sent or received);
	// Output.Result holds the grown authorized set.
	Reauthorized
	// Pass: the received message is not a session message. Hand it to the job loop. Only
	// after the handshake.
	Pass
	// Ended: the session is over; send Output.Send, then close. Output.End says why.
	Ended
)

func (s Status) String() string {
	return [...]string{"Continue", "Running", "Reauthorized", "Pass", "Ended"}[s]
}

// Output is everything one step asks of the driver.
type Output struct {
	Send   []wire.Message // in order; the driver sends them before anything else
	Need   Need           // non-nil: step the answer next
	Status Status
	Result Result // with Running and Reauthorized
	End    End    // with Ended
}

// Result is a session's handshake outcome, and after a reauth its current grants.
type Result struct {
	WorkerID     string
	Capabilities wire.GradientCapabilities // negotiated (gradient-protocol §5)
	Authorized   []string                  // peer IDs; never shrinks across reauths (gradient-protocol §4.3)
	Failed       []wire.FailedPeer         // the latest round's failures, authorized peers excluded
}

func (r Result) clone() Result {
	r.Authorized = slices.Clone(r.Authorized)
	r.Failed = slices.Clone(r.Failed)
	return r
}

// EndKind says how a session ended.
type EndKind uint8

const (
	// EndRejectSent: this side refused the other; the Reject is the last message of Send.
	// Close with 1008 "<code> <reason>" (gradient-server §10.4).
	EndRejectSent EndKind = iota + 1
	// EndRejectReceived: the other side sent Reject (or, during the handshake, Error).
	EndRejectReceived
	// EndProtocolError: the worker that dialed (Peer) saw a message it cannot accept. A Peer
	// has no Reject of its own (only a dialed worker sends ClientMessage::Reject), so nothing
	// is sent; Code and Reason say what was expected.
	EndProtocolError
	// EndDrained: the server sent Draining. A worker backs off as after a refusal
	// (gradient-protocol §4.5).
	EndDrained
	// EndRedial: a server-dialed reauth found a registration whose token this session did
	// not carry; close normally so the next dial carries it (gradient-protocol §4.3).
	EndRedial
	// EndFault: the driver broke the stepping contract; Err wraps ErrOutOfTurn or
	// ErrNotForRole.
	EndFault
	// EndViolation: the worker broke a running session's protocol (InitConnection after the
	// handshake, gradient-protocol §1.4). The last message of Send is Error{Code, Reason};
	// close normally once it is out.
	EndViolation
)

func (k EndKind) String() string {
	names := [...]string{"none", "RejectSent", "RejectReceived", "ProtocolError", "Drained", "Redial", "Fault", "Violation"}
	if int(k) < len(names) {
		return names[k]
	}
	return "EndKind(" + strconv.Itoa(int(k)) + ")"
}

// End describes how a session ended, with what the offline-reason bookkeeping needs.
type End struct {
	Kind   EndKind
	Code   uint16
	Reason string
	// WorkerID is the ID the session was about, when known.
	WorkerID string
	// BeforeTokenCheck: the failure came before any token was checked (gradient-protocol §4.4
	// Bookkeeping).
	BeforeTokenCheck bool
	// Registered: the server knows a registration or team worker for WorkerID (set by the
	// server roles once the facts were looked up).
	Registered bool
	Err        error // EndFault only
}

// String is the text a driver logs and, for failures, keeps as the offline reason.
func (e End) String() string {
	code := strconv.Itoa(int(e.Code))
	switch e.Kind {
	case EndRejectSent:
		return code + " " + e.Reason
	case EndRejectReceived:
		return "rejected by peer: " + code + " " + e.Reason
	case EndProtocolError:
		return "protocol error: " + code + " " + e.Reason
	case EndViolation:
		return "protocol violation: " + code + " " + e.Reason
	case EndDrained:
		return "peer is draining"
	case EndRedial:
		return "closed to redial with a new registration's token"
	case EndFault:
		if e.Err != nil {
			return "driver fault: " + e.Err.Error()
		}
		return "driver fault"
	}
	return "not ended"
}

func ended(e End, send ...wire.Message) Output {
	return Output{Send: send, Status: Ended, End: e}
}

func fault(err error) End { return End{Kind: EndFault, Err: err} }

// violationError is the Error an EndViolation sends before the close.
func violationError(e End) *wire.ServerError {
	return &wire.ServerError{Code: e.Code, Message: e.Reason}
}
