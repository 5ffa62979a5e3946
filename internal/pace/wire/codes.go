package wire

import "strconv"

// Code is the first byte of an Error reply's payload (pace-wire §1.11). Codes
// are non-dense; retired bytes (06, 22, 24, 28) are never reused and never
// sent, so they have no constant here.
type Code uint8

// Error codes, complete as of upstream wire version 15.
const (
	CodeUnsupportedVersion           Code = 0x01
	CodeUnknownOpcode                Code = 0x02
	CodeMalformedFrame               Code = 0x03
	CodePayloadTooLarge              Code = 0x04
	CodeMalformedValue               Code = 0x05
	CodeStorageWriteFailed           Code = 0x07
	CodeUnauthenticated              Code = 0x08
	CodeNoWorker                     Code = 0x09
	CodeNoCapacity                   Code = 0x0A
	CodeAlreadyInFlight              Code = 0x0B
	CodeDispatchNotPermitted         Code = 0x0C
	CodeUnknownLease                 Code = 0x0D
	CodeFingerprintMismatch          Code = 0x0E
	CodeUnsupportedCodec             Code = 0x0F
	CodeWorkerScratchUnavailable     Code = 0x10
	CodeWorkerSpawnFailed            Code = 0x11
	CodeNotLeader                    Code = 0x12
	CodeNotAMember                   Code = 0x13
	CodeWithdrawn                    Code = 0x14
	CodeNoCluster                    Code = 0x15
	CodeInvalidClusterChange         Code = 0x16
	CodeEndpointBusy                 Code = 0x17
	CodeMalformedRegistration        Code = 0x18
	CodeLeaseUnauthorized            Code = 0x19
	CodeLeaseEndpointMismatch        Code = 0x1A
	CodeLeaseExpired                 Code = 0x1B
	CodeWorkerToolchainSurveyPending Code = 0x1C
	CodeRequestDeadlineExceeded      Code = 0x1D
	CodeForeignValueGeneration       Code = 0x1E
	CodeClusterChangeInFlight        Code = 0x1F
	CodeClusterChangeNotNeeded       Code = 0x20
	CodeWorkerCompilerUnclassified   Code = 0x21
	CodeEnrollmentFull               Code = 0x23
	CodeUnknownFleetSelector         Code = 0x25
	CodeNodeProofUnchallenged        Code = 0x26
	CodeNodeProofRejected            Code = 0x27
	CodeNodeKeyUnknown               Code = 0x29
	CodeNodeKeyRevoked               Code = 0x2A
	CodeNodeIdentityRequired         Code = 0x2B
	CodeEnrollmentHostFull           Code = 0x2C
	CodeTicketRefused                Code = 0x2D
	CodeIdentifiedCallerRequired     Code = 0x2E
	CodeNotSharedCache               Code = 0x2F
	CodeWorkerRejectedArgument       Code = 0x30
	CodeGrantUnverifiable            Code = 0x31
	CodeRosterNotYetApplied          Code = 0x32
	CodeOperatorStandingRequired     Code = 0x33
)

// CodeInfo describes one error code byte.
type CodeInfo struct {
	Code      Code
	Name      string // wire name, e.g. "malformed-frame"
	Message   string // default sentence sent when a refusal has no message
	Retriable bool   // the same request may succeed later
	Retired   bool   // never sent; a client treats it as unrecognised
}

type codeRow struct {
	name, message      string
	retriable, retired bool
}

// codeTable is indexed by code byte; an empty name means "never assigned".
var codeTable = [256]codeRow{
	0x01: {name: "unsupported-version", message: "this wire version is not supported here"},
	0x02: {name: "unknown-opcode", message: "unknown opcode"},
	0x03: {name: "malformed-frame", message: "the frame does not match the verb's field grammar"},
	0x04: {name: "payload-too-large", message: "the declared payload is larger than this verb accepts"},
	0x05: {name: "malformed-value", message: "the value is not a compile-value"},
	0x06: {name: "canonicalization-failed", retired: true},
	0x07: {name: "storage-write-failed", message: "storage refused the write", retriable: true},
	0x08: {name: "unauthenticated", message: "authentication required"},
	0x09: {name: "no-worker", message: "no registered worker has this toolchain fingerprint", retriable: true},
	0x0A: {name: "no-capacity", message: "every matching worker is full", retriable: true},
	0x0B: {name: "already-in-flight", message: "another client holds a lease on this key", retriable: true},
	0x0C: {name: "dispatch-not-permitted", message: "this verb is not served on this endpoint"},
	0x0D: {name: "unknown-lease", message: "the scheduler holds no such lease"},
	0x0E: {name: "fingerprint-mismatch", message: "this worker does not serve that toolchain"},
	0x0F: {name: "unsupported-codec", message: "the payload's codec cannot be decoded here"},
	0x10: {name: "worker-scratch-unavailable", message: "the worker's scratch directory is unavailable"},
	0x11: {name: "worker-spawn-failed", message: "the worker could not start its compiler"},
	// not-leader's message is the leader's endpoint, empty during an
	// election, so it has no default sentence to substitute.
	0x12: {name: "not-leader"},
	0x13: {name: "not-a-member", message: "this caller is not admitted to this surface"},
	0x14: {name: "withdrawn", message: "matching workers withdrew their capacity", retriable: true},
	0x15: {name: "no-cluster", message: "this node runs no cluster"},
	0x16: {name: "invalid-cluster-change", message: "the cluster cannot accept that change"},
	0x17: {name: "endpoint-busy", message: "this endpoint is busy; try again shortly", retriable: true},
	0x18: {name: "malformed-registration", message: "registration text is not valid UTF-8"},
	0x19: {name: "lease-unauthorized", message: "the lease token was not issued by a live voter"},
	0x1A: {name: "lease-endpoint-mismatch", message: "the lease names a different worker endpoint"},
	0x1B: {name: "lease-expired", message: "the lease has expired"},
	0x1C: {name: "worker-toolchain-survey-in-flight", message: "the worker is still identifying its toolchains", retriable: true},
	0x1D: {name: "request-deadline-exceeded", message: "the request was abandoned at its deadline"},
	0x1E: {name: "foreign-value-generation", message: "the value belongs to another value generation"},
	0x1F: {name: "cluster-change-in-flight", message: "another membership change is still committing", retriable: true},
	0x20: {name: "cluster-change-not-needed", message: "the cluster is already in that state"},
	0x21: {name: "worker-compiler-unclassified", message: "the worker cannot classify its configured compiler"},
	0x22: {name: "enrollment-closed", retired: true},
	0x23: {name: "enrollment-full", message: "the pending enrollment list is full", retriable: true},
	0x24: {name: "enrollment-already-collected", retired: true},
	0x25: {name: "unknown-fleet-selector", message: "unknown fleet section or range"},
	0x26: {name: "node-proof-unchallenged", message: "no challenge is outstanding on this connection"},
	0x27: {name: "node-proof-rejected", message: "the signature does not verify under the presented key"},
	0x28: {name: "roster-expired", retired: true},
	0x29: {name: "node-key-unknown", message: "the key is not admitted for that node id"},
	0x2A: {name: "node-key-revoked", message: "the key has been revoked"},
	0x2B: {name: "node-identity-required", message: "this verb needs a proven node identity on this connection"},
	0x2C: {name: "enrollment-host-full", message: "this host has its quota of pending enrollments", retriable: true},
	0x2D: {name: "ticket-refused", message: "the machine ticket was refused"},
	0x2E: {name: "identified-caller-required", message: "control verbs need an identified caller"},
	0x2F: {name: "not-shared-cache", message: "this machine is not the fleet's shared cache"},
	0x30: {name: "worker-rejected-argument", message: "a job argument is not on the worker's allowlist"},
	0x31: {name: "grant-unverifiable", message: "the worker cannot verify grants yet", retriable: true},
	0x32: {name: "roster-not-yet-applied", message: "this node has not applied its recovered log yet", retriable: true},
	0x33: {name: "operator-standing-required", message: "control verbs need operator standing"},
}

// Info describes c. ok is false for a byte never assigned a code.
func (c Code) Info() (info CodeInfo, ok bool) {
	row := codeTable[c]
	if row.name == "" {
		return CodeInfo{Code: c}, false
	}
	return CodeInfo{Code: c, Name: row.name, Message: row.message, Retriable: row.retriable, Retired: row.retired}, true
}

// Live reports whether c is an assigned, non-retired code: one a server may
// send and a client recognises.
func (c Code) Live() bool {
	row := codeTable[c]
	return row.name != "" && !row.retired
}

// Retired reports whether c is one of the retired bytes 06, 22, 24, 28.
func (c Code) Retired() bool { return codeTable[c].retired }

// Retriable reports whether the same request may succeed later.
func (c Code) Retriable() bool { return codeTable[c].retriable }

// DefaultMessage is the sentence a server substitutes for an empty message.
func (c Code) DefaultMessage() string { return codeTable[c].message }

// String is the wire name; unknown bytes print as "code-0xNN".
func (c Code) String() string {
	if name := codeTable[c].name; name != "" {
		return name
	}
	return "code-0x" + strconv.FormatUint(uint64(c), 16)
}

// LiveCodes lists every code a server may send, in byte order.
func LiveCodes() []Code {
	var codes []Code
	for i := range codeTable {
		if Code(i).Live() {
			codes = append(codes, Code(i))
		}
	}
	return codes
}
