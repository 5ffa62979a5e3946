package wire

import "strconv"

// ConnState is what the receiver knows about a connection when a request
// header arrives.
type ConnState struct {
	// Version is the version of the first request on this connection; 0
	// means none yet (every valid version is at least 1). The caller pins
	// it after the first Decide that does not close the connection.
	Version uint8
	// Authenticated: an AUTH was accepted on this connection.
	Authenticated bool
	// CredentialRequired: the surface gates non-pre-auth verbs on AUTH.
	CredentialRequired bool
	// SessionCap is the surface's session cap; 0 means DefaultSessionCap.
	SessionCap uint32
}

// Action is what the receiver does with a request after its header.
type Action uint8

// Actions of the receiver order (pace-wire §1.7).
const (
	// ActionReadPayload: read the payload and split its fields.
	ActionReadPayload Action = iota
	// ActionClose: not this protocol; close without a reply.
	ActionClose
	// ActionRefuseAndClose: reply with the refusal, then close.
	ActionRefuseAndClose
	// ActionRefuseAndDrain: reply with the refusal, discard exactly the
	// declared payload, keep serving.
	ActionRefuseAndDrain
	// ActionRefuseAndEnd: the declared payload is beyond OversizeDrainFactor
	// times the cap; reply, then end the connection without draining.
	ActionRefuseAndEnd
)

var actionNames = [...]string{"read-payload", "close", "refuse-and-close", "refuse-and-drain", "refuse-and-end"}

func (a Action) String() string { return actionNames[a] }

// Decision is the outcome of Decide.
type Decision struct {
	Action  Action
	Refusal Refusal // set for the Refuse* actions
	Info    OpInfo  // the op's row; zero for unknown opcodes
	// Limit is the payload ceiling that applied (min(verbCap, sessionCap),
	// or the session cap for an unknown opcode).
	Limit uint32
}

// Decide applies the receiver processing order of pace-wire §1.7, steps 1 to 4,
// from the header alone: magic, version (range and per-connection pin),
// then a. unknown opcode, b. over the cap, c. missing credential on a verb
// that is not pre-auth, in that order. It is pure.
func Decide(h RequestHeader, st ConnState) Decision {
	if h.Magic != Magic {
		return Decision{Action: ActionClose}
	}
	if h.Version < MinVersion || h.Version > Version || (st.Version != 0 && h.Version != st.Version) {
		return Decision{Action: ActionRefuseAndClose, Refusal: UnsupportedVersion(h.Version)}
	}
	session := st.SessionCap
	if session == 0 {
		session = DefaultSessionCap
	}
	info, known := Lookup(h.Op)
	if !known {
		// An unknown verb has no cap of its own; the largest frame the
		// surface accepts bounds what is worth draining.
		return refuse(Refusal{Code: CodeUnknownOpcode, Message: unknownOpMessage(h.Op)}, h, info, session)
	}
	limit := info.Limit(session)
	if h.PayloadLen > limit {
		return refuse(Refusal{Code: CodePayloadTooLarge, Message: tooLargeMessage(info, h.PayloadLen, limit)}, h, info, limit)
	}
	if st.CredentialRequired && !st.Authenticated && info.Gate != GatePre {
		return refuse(Refusal{Code: CodeUnauthenticated, Message: "authentication required"}, h, info, limit)
	}
	return Decision{Action: ActionReadPayload, Info: info, Limit: limit}
}

// refuse drains when the declared payload is within OversizeDrainFactor
// times the limit, and ends the connection otherwise.
func refuse(r Refusal, h RequestHeader, info OpInfo, limit uint32) Decision {
	action := ActionRefuseAndDrain
	if uint64(h.PayloadLen) > uint64(limit)*OversizeDrainFactor {
		action = ActionRefuseAndEnd
	}
	return Decision{Action: action, Refusal: r, Info: info, Limit: limit}
}

// UnsupportedVersion is the exact unsupported-version refusal for v.
func UnsupportedVersion(v uint8) Refusal {
	msg := "unsupported wire version " + strconv.Itoa(int(v)) + "; this server speaks " +
		strconv.Itoa(int(MinVersion)) + ".." + strconv.Itoa(int(Version))
	return Refusal{Code: CodeUnsupportedVersion, Message: msg}
}

func unknownOpMessage(op Op) string {
	hex := "0x" + strconv.FormatUint(uint64(op), 16)
	if name := retiredOps[op]; name != "" {
		return "opcode " + hex + " (" + name + ") is retired"
	}
	return "unknown opcode " + hex
}

func tooLargeMessage(info OpInfo, declared, limit uint32) string {
	return info.Name + " payload of " + strconv.FormatUint(uint64(declared), 10) +
		" bytes exceeds its cap of " + strconv.FormatUint(uint64(limit), 10) + " bytes"
}
