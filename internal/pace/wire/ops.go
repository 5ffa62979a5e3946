package wire

import "strconv"

// Op is a request's opcode (pace-wire §1.12).
type Op uint8

// Opcodes, complete as of upstream wire version 15. Retired bytes 16, 17
// and 1D have no constant; they are answered unknown-opcode.
const (
	OpStore               Op = 0x01
	OpFetch               Op = 0x02
	OpAuth                Op = 0x03
	OpRegister            Op = 0x04
	OpHeartbeat           Op = 0x05
	OpLease               Op = 0x06
	OpCompile             Op = 0x07
	OpClusterStatus       Op = 0x08
	OpClusterSet          Op = 0x09
	OpClusterForget       Op = 0x0A
	OpClusterAdmit        Op = 0x0B
	OpRelease             Op = 0x0C
	OpWithdraw            Op = 0x0D
	OpNodeStatus          Op = 0x0E
	OpNodeMetrics         Op = 0x0F
	OpEnroll              Op = 0x10
	OpEnrollControl       Op = 0x11
	OpSubscribe           Op = 0x12
	OpCordon              Op = 0x13
	OpFleetText           Op = 0x14
	OpCacheDrop           Op = 0x15
	OpNodeChallenge       Op = 0x18
	OpProveNode           Op = 0x19
	OpNodeAnnounce        Op = 0x1A
	OpExplainAdmission    Op = 0x1B
	OpClusterAdmitLearner Op = 0x1C
	OpMintTicket          Op = 0x1E
	OpFleetSummary        Op = 0x1F
	OpSharedFetch         Op = 0x20
	OpSharedStore         Op = 0x21
)

// Gate is what a verb needs before it runs, beyond the surface's admission.
type Gate uint8

// Gates (pace-wire §1.12 "Gate" column).
const (
	GateNone         Gate = iota // any caller the surface admits
	GatePre                      // reachable before authentication
	GateIdentity                 // needs a proven node identity on this connection
	GateOperator                 // needs operator standing
	GateLoopbackOnly             // served to loopback callers only
)

var gateNames = [...]string{"none", "pre", "id", "op", "loopback-only"}

func (g Gate) String() string { return gateNames[g] }

// Family groups verbs by the component that serves them.
type Family uint8

// Families (pace-wire §1.12 "Family" column).
const (
	FamilyCache Family = iota + 1
	FamilySession
	FamilyScheduler
	FamilyCompile
	FamilyNode
	FamilyEnrollment
	FamilyLive
	FamilyFleet
	FamilyNodeProof
	FamilyFormation
	FamilySharedCache
)

var familyNames = [...]string{"", "cache", "session", "scheduler", "compile", "node",
	"enrollment", "live", "fleet", "node-proof", "formation", "shared-cache"}

func (f Family) String() string { return familyNames[f] }

// Payload caps and reply ceilings (pace-wire §1.10).
const (
	DefaultSessionCap          uint32 = 256 << 20 // --storage-max-value default
	MaxAuthPayload             uint32 = 4096
	MaxControlPayload          uint32 = 64 << 10
	MaxEnrollPayload           uint32 = 1024
	MaxNodeProofPayload        uint32 = 512
	MaxMintTicketPayload       uint32 = 512
	MaxExplainAdmissionPayload uint32 = 512
	MaxFleetSummaryPayload     uint32 = 64

	MaxRefusalReply       uint32 = 64 << 10
	MaxSealedReplyPayload uint32 = 4 << 20
	MaxReportReply        uint32 = 64 << 20

	// OversizeDrainFactor: a refused frame declaring more than this many
	// times its cap ends the connection instead of being drained.
	OversizeDrainFactor = 4
	// MaxCodecList is the most codec ids a codec list may carry.
	MaxCodecList = 16
	// SealTagLen is the HMAC-SHA256 tag that follows every frame of a
	// proven node connection, not counted in payloadLength (pace-wire §1.15.4).
	SealTagLen = 32
)

// OpInfo is one row of the opcode table.
type OpInfo struct {
	Op    Op
	Name  string // e.g. "FETCH"
	Arity int    // exact number of top-level request fields
	// Cap is the verb's fixed payload cap; 0 means the session cap applies.
	Cap      uint32
	Statuses StatusSet // legal reply statuses
	Gate     Gate
	Family   Family
	// ReplyCeiling bounds a reply's payload at the client; 0 means unbounded
	// by the verb (FETCH hits, COMPILE replies): the client applies its own.
	ReplyCeiling uint32
}

// SessionCapped reports whether the verb's cap is the session cap.
func (i OpInfo) SessionCapped() bool { return i.Cap == 0 }

// Limit is the payload ceiling for this verb on a surface whose session cap
// is sessionCap: min(verbCap, sessionCap) (pace-wire §1.7 step 3b).
func (i OpInfo) Limit(sessionCap uint32) uint32 {
	if i.Cap == 0 || i.Cap > sessionCap {
		return sessionCap
	}
	return i.Cap
}

// ReplyLimit is the largest reply payload a client accepts for this verb,
// given the client's own cap for verbs the table leaves unbounded.
func (i OpInfo) ReplyLimit(clientCap uint32) uint32 {
	if i.ReplyCeiling == 0 {
		return clientCap
	}
	return i.ReplyCeiling
}

// Lookup returns the table row for op. ok is false for unknown and retired
// opcodes, which a receiver answers unknown-opcode.
func Lookup(op Op) (info OpInfo, ok bool) {
	info = opTable[op]
	return info, info.Name != ""
}

// Retired reports whether op is one of the retired opcodes 16, 17, 1D.
func (op Op) Retired() bool { return retiredOps[op] != "" }

// String is the verb name; retired and unknown bytes print as "op-0xNN".
func (op Op) String() string {
	if name := opTable[op].Name; name != "" {
		return name
	}
	return "op-0x" + strconv.FormatUint(uint64(op), 16)
}

// KnownOps lists every live opcode in byte order.
func KnownOps() []Op {
	var ops []Op
	for i := range opTable {
		if opTable[i].Name != "" {
			ops = append(ops, Op(i))
		}
	}
	return ops
}
