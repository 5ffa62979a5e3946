package cacheserve

import (
	"context"
	"log/slog"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/narstore"
	"github.com/buildfleet/buildfleet/internal/gradient/store"
	"github.com/buildfleet/buildfleet/internal/gradient/wire"
)

// Limits of gradient-protocol §1.3, gradient-protocol §7.2 and gradient-protocol §7.4.
const (
	// MaxQueryPaths is CACHE_QUERY_MAX_PATHS.
	MaxQueryPaths = 1000
	// DefaultQueryTimeout is the server's limit for answering a CacheQuery (the worker
	// waits 75 s).
	DefaultQueryTimeout = 45 * time.Second
	// ChunkSize is BULK_CHUNK_SIZE, the payload of one NarPush.
	ChunkSize = 512 << 10
	// MaxConcurrentServes is nar.maxConcurrentServes: NAR streams per session.
	MaxConcurrentServes = 8
	// maxQueuedServes bounds the NAR paths waiting for a serve slot on one session; past it
	// a request is answered NarAbort (retryable).
	maxQueuedServes = 4096
	// maxConcurrentQueries: a worker keeps at most 4 queries in flight
	// (gradient-protocol §7.2); a fifth waits in Handle, which holds back the read loop.
	maxConcurrentQueries = 4
	// maxOpenUploads bounds one session's upload table (the worker has 16 large and 128
	// small slots).
	maxOpenUploads = 256
	// DefaultMaxNarSize refuses declared NARs larger than this outright.
	DefaultMaxNarSize = 64 << 30
	// storeCallTimeout bounds the store calls other than queries (grant lookups, records,
	// demotions), and the storage-open limit of gradient-protocol §7.4.
	storeCallTimeout = 60 * time.Second
)

// Paths is what the session needs of the store (store.CachedPaths satisfies it).
type Paths interface {
	LookupCachedPaths(ctx context.Context, cacheIDs, storePaths []string) (map[string]store.CachedPath, error)
	PutCachedPath(ctx context.Context, p store.CachedPath, cacheIDs []string) error
	DemoteCachedPath(ctx context.Context, storeHash string) error
	MarkFetched(ctx context.Context, storeHash string) error
}

// Upstream finds a path in the upstream caches of cacheIDs (upstream.Resolver.Lookup):
// the Pull answer for it, false when none holds it under a trusted signature, an error only
// when the state could not be read (gradient-server §14).
type Upstream interface {
	Lookup(ctx context.Context, cacheIDs []string, storePath string) (wire.CachedPath, bool, error)
}

// Config configures one Session. Paths, NARs, Send and Scope are required; Admission
// and Counters should be the server-wide ones.
type Config struct {
	Paths Paths
	NARs  *narstore.Store
	// Send queues a reply. It is called from several goroutines, must not keep m (or its
	// byte slices) after it returns, and should apply the stall timeout (wsconn.Writer.Send
	// does all three).
	Send func(ctx context.Context, m wire.ServerMessage) error
	// Scope returns the cache IDs the session may read and push to, asked at each use so a
	// reauth that adds peers takes effect at the next message.
	Scope func() (readable, pushable []string)
	// Upstream answers external queries for paths the caches lack (gradient-protocol §7.2).
	// Nil: external queries are answered from the caches alone.
	Upstream Upstream
	// Admission is the server-wide upload admission. Nil gets a private default one
	// (tests).
	Admission *Admission
	// Counters are the server-wide counters. Nil gets private ones.
	Counters *Counters
	// WorkerID names this worker's staged uploads, so a retry after a reconnect resumes.
	// Required unless ReadOnly.
	WorkerID string
	// ReadOnly marks a /cache/{cache}/proto session: uploads and Push queries are refused
	// with ErrForbidden.
	ReadOnly bool
	Logger   *slog.Logger
	// Now is the clock of upload leases. Nil means time.Now.
	Now func() time.Time
	// QueryTimeout: zero means DefaultQueryTimeout.
	QueryTimeout time.Duration
	// MaxNarSize: zero means DefaultMaxNarSize.
	MaxNarSize int64
}

func (c Config) withDefaults() Config {
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Admission == nil {
		c.Admission = NewAdmission(AdmissionConfig{Now: c.Now})
	}
	if c.Counters == nil {
		c.Counters = new(Counters)
	}
	if c.QueryTimeout <= 0 {
		c.QueryTimeout = DefaultQueryTimeout
	}
	if c.MaxNarSize <= 0 {
		c.MaxNarSize = DefaultMaxNarSize
	}
	return c
}
