package frameserver

// RefusalKind names a refusal the server decides itself, from the header
// or the field split, before any Handler sees the request.
type RefusalKind uint8

// Refusal kinds, named after pace-kv's pace_cache_frames_refused_*_total.
const (
	RefusedBadMagic           RefusalKind = iota + 1 // closed without a reply
	RefusedUnsupportedVersion                        // replied, then closed
	RefusedUnknownOpcode                             // replied, payload drained
	RefusedPayloadTooLarge                           // replied, drained or connection ended
	RefusedUnauthenticated                           // replied, payload drained
	RefusedMalformedPayload                          // wrong arity: replied malformed-frame
	RefusedEndpointBusy                              // the payload budget had no room: replied, drained
)

var refusalNames = [...]string{"", "bad_magic", "unsupported_version", "unknown_opcode",
	"payload_too_large", "unauthenticated", "malformed_payload", "endpoint_busy"}

// RefusalKinds lists every kind, for exporters that render each from the start.
var RefusalKinds = []RefusalKind{RefusedBadMagic, RefusedUnsupportedVersion, RefusedUnknownOpcode,
	RefusedPayloadTooLarge, RefusedUnauthenticated, RefusedMalformedPayload, RefusedEndpointBusy}

// String is the metric-style name, e.g. "payload_too_large".
func (k RefusalKind) String() string { return refusalNames[k] }

// CloseReason says why the server closed a connection.
type CloseReason uint8

// Close reasons.
const (
	ClosedByPeer      CloseReason = iota + 1 // end of stream or reset from the peer
	ClosedIdle                               // no request within the idle timeout
	ClosedStalled                            // a frame did not arrive whole within its deadline
	ClosedProtocol                           // bad magic, unsupported version, oversize frame
	ClosedBadTag                             // a sealed frame failed its tag
	ClosedWriteFailed                        // a reply could not be written
	ClosedByHandler                          // the handler's reply asked for it
	ClosedShutdown                           // server shutdown
	ClosedAuthTimeout                        // no accepted AUTH within the pre-auth deadline
	ClosedDisplaced                          // idle or mid-header when a newcomer needed its slot
)

var closeNames = [...]string{"", "peer", "idle", "stalled", "protocol", "bad_tag",
	"write_failed", "handler", "shutdown", "auth_timeout", "displaced"}

// CloseReasons lists every reason, for exporters that render each from the start.
var CloseReasons = []CloseReason{ClosedByPeer, ClosedIdle, ClosedStalled, ClosedProtocol,
	ClosedBadTag, ClosedWriteFailed, ClosedByHandler, ClosedShutdown, ClosedAuthTimeout, ClosedDisplaced}

func (r CloseReason) String() string { return closeNames[r] }

// RejectReason says why a new connection was closed at once, unserved.
type RejectReason uint8

// Reject reasons.
const (
	RejectedAtCapacity RejectReason = iota + 1 // MaxConns open, none displaceable
	RejectedPerAddress                         // its source address already holds MaxConnsPerAddr
)

var rejectNames = [...]string{"", "at_capacity", "per_address"}

func (r RejectReason) String() string { return rejectNames[r] }

// Observer receives the server's own events so a daemon can count them
// (pace-kv maps them to pace_connections_total,
// pace_connections_rejected_total and pace_cache_frames_refused_*_total).
// Methods are called from connection goroutines and must be cheap and safe
// for concurrent use. Refusals a Handler answers itself are not reported.
type Observer interface {
	ConnAccepted()
	ConnRejected(reason RejectReason) // closed at once, unserved
	ConnClosed(reason CloseReason)
	Refused(kind RefusalKind)
}

// NopObserver ignores every event; embed it to implement only some.
type NopObserver struct{}

func (NopObserver) ConnAccepted()             {}
func (NopObserver) ConnRejected(RejectReason) {}
func (NopObserver) ConnClosed(CloseReason)    {}
func (NopObserver) Refused(RefusalKind)       {}
