package wire

// Size caps of gradient-protocol §1.3.
const (
	// MaxHandshakeMessageSize caps every frame read before the handshake ends; a bigger
	// frame closes the session with 1002 without being decoded.
	MaxHandshakeMessageSize = 64 << 10
	// MaxProtoMessageSize is the read limit on /proto after the handshake, both directions.
	MaxProtoMessageSize = 8 << 20
	// SafeInflightMessageSize keeps request/reply messages (CacheQuery, CacheStatus, job
	// pages) small enough that two peers blocked in large writes cannot deadlock; a hard cap
	// per message on cache sessions.
	SafeInflightMessageSize = 2 << 20
	// BulkChunkSize is the payload size of one NAR or eval-cache chunk frame.
	BulkChunkSize = 512 << 10
	// CacheQueryMaxPaths is the most paths per CacheQuery or QueryKnownDerivations.
	CacheQueryMaxPaths = 1000
	// JobOfferChunkSize is the most candidates per JobOffer or JobListChunk page.
	JobOfferChunkSize = 1000
)
