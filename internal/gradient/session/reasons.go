package session

import "unicode/utf8"

// Rejection codes of gradient-protocol §4.5.
const (
	CodeUnexpected       uint16 = 400 // an unexpected message during the handshake
	CodeUnauthorized     uint16 = 401 // no valid token (server) or wrong worker/token (dialed worker)
	CodeForbidden        uint16 = 403 // unknown, deactivated, ungranted team worker, inbound disabled
	CodeNoCache          uint16 = 495 // every authorized project lacks a cache
	CodeAlreadyConnected uint16 = 496 // one session per worker ID
)

// Reject reasons, exactly as gradient-protocol §4.1 and gradient-protocol §4.5 word them.
const (
	ReasonExpectedInitConnection = "expected InitConnection"
	ReasonExpectedAuthResponse   = "expected AuthResponse"
	ReasonExpectedAuthenticate   = "expected Authenticate"
	ReasonNotAccepting           = "server is not accepting connections"
	ReasonUnknownWorker          = "unknown worker"
	ReasonDeactivated            = "worker is deactivated"
	ReasonNoTeamGrant            = "no project grants this team's workers"
	ReasonNoValidTokens          = "no valid peer tokens provided"
	ReasonNoCache                = "project has no cache subscribed"
	ReasonAlreadyConnected       = "worker already connected"
	ReasonWrongWorkerOrToken     = "unknown worker id or wrong token"
	// ReasonDialedAnsweredAsPrefix starts "dialed worker answered as <id>"; see
	// DialedAnsweredAs.
	ReasonDialedAnsweredAsPrefix = "dialed worker answered as "
	// ReasonExpectedAuthChallenge and ReasonExpectedInitAck: what a worker expected when the
	// server sent something else. A dialed worker sends them as ClientReject 400; a Peer ends
	// with EndProtocolError.
	ReasonExpectedAuthChallenge = "expected AuthChallenge"
	ReasonExpectedInitAck       = "expected InitAck"
)

// Error messages (ServerMessage::Error, gradient-protocol §1.4), each sent with code 400 right
// before the session closes.
const (
	// MessageUnexpectedInitConnection answers an InitConnection after the handshake.
	MessageUnexpectedInitConnection = "unexpected InitConnection"
	// MessageMalformed answers a frame that does not decode, during the handshake or after it.
	MessageMalformed = "malformed message"
)

// failed_peers reasons (gradient-protocol §4.4 step 4 and 5).
const (
	FailedInvalidToken = "invalid token"
	FailedNoToken      = "no token provided"
	FailedNoCache      = ReasonNoCache
)

// maxEchoedID bounds how much of a peer-chosen worker ID is echoed into a reason. Real IDs are
// 36-byte UUIDs; a reason ends up in logs and in the offline-reason map, so an ID of up to a
// handshake frame's 64 KiB is cut.
const maxEchoedID = 128

// DialedAnsweredAs is the 400 reason a Dialer sends when the dialed worker answers with
// another ID: "dialed worker answered as <id>", the ID cut at maxEchoedID bytes on a rune
// boundary.
func DialedAnsweredAs(id string) string {
	if len(id) > maxEchoedID {
		cut := maxEchoedID
		for cut > 0 && !utf8.RuneStart(id[cut]) {
			cut--
		}
		id = id[:cut] + "…"
	}
	return ReasonDialedAnsweredAsPrefix + id
}
