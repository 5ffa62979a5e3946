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
)

var refusalNames = [...]string{"", "bad_magic", "unsupported_version", "unknown_opcode",
	"payload_too_large", "unauthenticated", "malformed_payload"}

// String is the metric-style name, e.g. "payload_too_large".
func (k RefusalKind) String() string { return refusalNames[k] }

// CloseReason says why the server closed a connection.
type CloseReason uint8

// Close reasons.
const (
	ClosedByPeer      CloseReason = iota + 1 // end of stream or reset from the peer
	ClosedIdle                               // no request within the idle timeout
	ClosedStalled                            // a frame stopped arriving mid-way
	ClosedProtocol                           // bad magic, unsupported version, oversize frame
	ClosedBadTag                             // a sealed frame failed its tag
	ClosedWriteFailed                        // a reply could not be written
	ClosedByHandler                          // the handler's reply asked for it
	ClosedShutdown                           // server shutdown
)

var closeNames = [...]string{"", "peer", "idle", "stalled", "protocol", "bad_tag",
	"write_failed", "handler", "shutdown"}

func (r CloseReason) String() string { return closeNames[r] }

// Observer receives the server's own events so a daemon can count them
// (pace-kv maps them to pace_connections_total,
// pace_connections_rejected_total and pace_cache_frames_refused_*_total).
// Methods are called from connection goroutines and must be cheap and safe
// for concurrent use. Refusals a Handler answers itself are not reported.
type Observer interface {
	ConnAccepted()
	ConnRejected() // beyond the connection cap; closed at once
	ConnClosed(reason CloseReason)
	Refused(kind RefusalKind)
}

// NopObserver ignores every event; embed it to implement only some.
type NopObserver struct{}

func (NopObserver) ConnAccepted()          {}
func (NopObserver) ConnRejected()          {}
func (NopObserver) ConnClosed(CloseReason) {}
func (NopObserver) Refused(RefusalKind)    {}
