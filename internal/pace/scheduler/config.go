package scheduler

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/verbs"
)

// Defaults of pace-node §6 and pace's own choices.
const (
	DefaultHeartbeatTimeout = 90 * time.Second
	DefaultLeaseLifetime    = 10 * time.Minute
	MaxLeaseLifetime        = time.Hour
	// DefaultMemoryPerJob and DefaultScratchPerJob turn available memory
	// and free scratch into how many more compiles a machine can take.
	DefaultMemoryPerJob  = 512 << 20
	DefaultScratchPerJob = 256 << 20
	// DefaultMismatchLogLimit: endpoint mismatches logged at INFO, then
	// left to the counter (pace-node §6.1).
	DefaultMismatchLogLimit = 20
	// DefaultRetainExpired bounds the expired leases remembered so that a
	// release arriving after expiry is counted late, not unknown.
	DefaultRetainExpired = 4096
	// MaxUnserved bounds the toolchains remembered for the
	// unserved-toolchain condition.
	MaxUnserved = 64
)

// Claims is what a lease token binds; the node's Signer encodes and signs
// it (token v1: `[u8 1][serial][endpoint][fingerprint][key][u64
// expiresAtUnixMs][clusterId][u64 epoch][signerId][workerKey 32 or
// empty]`), adding its own signer id.
type Claims struct {
	Serial      uint64 // restarts at 1 with each scheduler
	Endpoint    string
	Fingerprint string
	Key         string
	ExpiresAt   time.Time // millisecond precision on the wire
	ClusterID   string
	Epoch       uint64 // Raft term of the granting leader
	WorkerKey   []byte // 32 bytes, or nil
}

// Signer issues the base64 token text for a grant with the scheduler's
// identity key. It is called outside the scheduler's lock.
type Signer interface {
	IssueLease(Claims) (token string, err error)
}

// LeaseVerifier, when set, tells a RELEASE whose token matches no lease
// apart: one this cluster never signed is counted unauthorized.
type LeaseVerifier interface {
	SignedByCluster(token string) bool
}

// Caller is what the node knows about a request's connection.
type Caller struct {
	NodeID string     // the proven node id; empty when the connection proved none
	Key    []byte     // that node's identity key (32 bytes), handed to clients as workerKey
	Addr   netip.Addr // the connection's source address; invalid when unknown
}

// Params are the replicated facts a decision uses, read by the node from
// its applied state at each request.
type Params struct {
	Epoch         uint64        // the leader's Raft term
	LeaseLifetime time.Duration // the cluster's lease-lifetime setting
	// ClusterID is the cluster the leader leads now, signed into grants and registrations; ""
	// falls back to Config.ClusterID. A node that dissolved its own cluster to join a fleet
	// schedules for the fleet from then on.
	ClusterID string
}

// clusterID is the cluster a decision is made for.
func (s *Scheduler) clusterID(p Params) string { return cmp.Or(p.ClusterID, s.cfg.ClusterID) }

// Config configures a Scheduler.
type Config struct {
	ClusterID string
	Signer    Signer
	Verifier  LeaseVerifier    // optional
	Now       func() time.Time // the injected clock; time.Now when nil
	Logger    *slog.Logger     // INFO lines for endpoint mismatches; discarded when nil
	// History receives each machine's newly delivered history buckets
	// (those past its high-water mark), outside the lock. Optional.
	History func(nodeID string, buckets []verbs.HistoryBucket)
	// Decided is told how each LEASE was decided, outside the lock, so the leader can count
	// dispatch outcomes into its history without the scheduler growing counters. Optional.
	Decided func(Outcome)

	HeartbeatTimeout time.Duration
	MemoryPerJob     uint64
	ScratchPerJob    uint64
	MismatchLogLimit int
	RetainExpired    int
}

// ErrConfig refuses a configuration a scheduler cannot run with.
var ErrConfig = errors.New("scheduler: invalid configuration")

func (c Config) withDefaults() (Config, error) {
	if c.Signer == nil {
		return c, fmt.Errorf("%w: no signer", ErrConfig)
	}
	if c.ClusterID == "" || len(c.ClusterID) > verbs.MaxID {
		return c, fmt.Errorf("%w: cluster id must be 1..%d bytes", ErrConfig, verbs.MaxID)
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	c.HeartbeatTimeout = orDefault(c.HeartbeatTimeout, DefaultHeartbeatTimeout)
	c.MemoryPerJob = orDefault(c.MemoryPerJob, DefaultMemoryPerJob)
	c.ScratchPerJob = orDefault(c.ScratchPerJob, DefaultScratchPerJob)
	c.MismatchLogLimit = orDefault(c.MismatchLogLimit, DefaultMismatchLogLimit)
	c.RetainExpired = orDefault(c.RetainExpired, DefaultRetainExpired)
	return c, nil
}

func orDefault[T time.Duration | uint64 | int](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// lifetime is the grant lifetime: the setting, defaulted and capped at an
// hour (pace-node §6.3).
func (p Params) lifetime() time.Duration {
	switch {
	case p.LeaseLifetime <= 0:
		return DefaultLeaseLifetime
	case p.LeaseLifetime > MaxLeaseLifetime:
		return MaxLeaseLifetime
	}
	return p.LeaseLifetime
}
