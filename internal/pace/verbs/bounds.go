package verbs

// Size bounds of pace-wire §1.10, and the ones this package adds where that
// section is silent. Text beyond its bound is refused, never truncated.
const (
	MaxID             = 64  // node, cluster and worker ids
	MaxEndpoint       = 260 // 254 host bytes + ":65535"
	MaxFingerprint    = 64  // toolchain fingerprint
	MaxKey            = 64  // lease (object) key
	MaxLabel          = 128 // toolchain label
	MaxVersion        = 128 // node software version
	MaxDisplayName    = 255 // capacity display name
	MaxExclusions     = 16  // LEASE exclusions
	MaxExclusionLen   = 261 // one excluded endpoint
	MaxInterfaceAddrs = 32  // capacity/load interface addresses
	MaxInterfaceAddr  = 64  // one interface address
	MaxHistoryBuckets = 128 // history buckets per heartbeat
	MaxJoinMemos      = 8   // NODE-ANNOUNCE join memos
	MaxTicket         = 1024

	// Bounds pace-wire §1.10 leaves open (pace's choices).

	// MaxLeaseToken bounds the base64 token text: a v1 token's claims and
	// signature take well under 1 KiB even with every text at its bound.
	MaxLeaseToken = 2048
	// MaxCompileArgs bounds COMPILE's argument list; a real compile line
	// carries a few hundred at most.
	MaxCompileArgs = 16384
	// MaxPath bounds COMPILE's source name and directory fields (PATH_MAX).
	MaxPath = 4096
	// MaxCacheTiers bounds the per-tier lists of the capacity and load
	// records; two tiers exist today and the order is append-only.
	MaxCacheTiers = 16
	// HistorySeries is the number of packed u64 series a history bucket
	// carries today; a longer packing is read and its surplus ignored.
	HistorySeries = 13
	// MinHistorySeries is the shortest packing read: the ten series of
	// nodes built before the CPU ticks and slot refusals were added. The
	// series such a bucket leaves out are unmeasured (HistoryBucket.Absent).
	MinHistorySeries = 10
	// MaxHistorySeries bounds how many packed series a bucket may carry.
	MaxHistorySeries = 64
	// CorrelationLen is the COMPILE reply's correlation: 32 lowercase hex.
	CorrelationLen = 32
)

// Fixed widths of the node-proof and key material.
const (
	KeyLen       = 32 // Ed25519 public key, X25519 key, nonce
	SignatureLen = 64 // Ed25519 signature
	NonceLen     = 32
)
