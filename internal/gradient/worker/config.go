package worker

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/nixexec"
	"github.com/buildfleet/buildfleet/internal/gradient/wire"
	"github.com/buildfleet/buildfleet/internal/gradient/wsconn"
)

// Config configures a Worker. Zero durations take the documented defaults.
type Config struct {
	// ServerURL is the ws:// or wss:// URL of the server's /proto (worker-dialed mode).
	ServerURL string
	// Listen is the host:port where the worker accepts the server's sessions instead of
	// dialing (discoverable mode, gradient-protocol §4.1 as_dialed; DefaultListenAddr is the
	// usual one). Run listens when it is set, and dials ServerURL otherwise.
	Listen string
	// AcceptedServerTokensFile holds the `peer_id:hash` lines a dialing server's tokens must
	// match (discoverable mode only); empty accepts every server, with a warning at start.
	AcceptedServerTokensFile string
	// BaseDir holds worker-id and the job scratch directories (checkouts, pulled NARs).
	BaseDir string
	// WorkerID is the persistent worker ID (see LoadWorkerID).
	WorkerID string
	// PeersFile is the peers file path; empty means no tokens.
	PeersFile string
	// MaxConcurrentBuilds is the build slot count (default 1, gradient-server §10.11).
	// Evaluations always have one slot.
	MaxConcurrentBuilds int
	// Offer is what the worker offers in InitConnection; the zero value offers fetch, eval
	// and build.
	Offer wire.GradientCapabilities
	// Architectures and SystemFeatures replace the detected lists in WorkerCapabilities when
	// set (GRADIENT_WORKER_SYSTEM_ARCHITECTURES / _FEATURES).
	Architectures, SystemFeatures []string
	// Nix runs the nix command line; nil means nixexec.New with defaults.
	Nix    *nixexec.Nix
	Logger *slog.Logger
	// Dial configures DialServer (connect timeout, TLS).
	Dial wsconn.DialOptions

	// MetricsInterval is the WorkerMetrics heartbeat (10 s).
	MetricsInterval time.Duration
	// PeersPollInterval is how often the peers file is checked for changes (2 s).
	PeersPollInterval time.Duration
	// StopGrace bounds the wait for the reports of jobs cancelled at shutdown (5 s).
	StopGrace time.Duration
	// CacheReplyTimeout is how long a CacheQuery waits for its answer (75 s,
	// gradient-protocol §7.2).
	CacheReplyTimeout time.Duration
	// TransferTimeout bounds one NAR pull (600 s, gradient-protocol §7.4).
	TransferTimeout time.Duration
	// RetryDelay is the first delay between retries of a CacheError or an upload (1 s).
	RetryDelay time.Duration
	// ProbeInterval is how often a worker whose Nix cannot do everything probes it again (1 min).
	ProbeInterval time.Duration
}

// Default durations: the heartbeat (gradient-server §6.1), the peers-file poll
// (gradient-protocol §4.3), the stop grace (gradient-server §6.6), the cache reply wait
// (gradient-protocol §7.2) and the pull bound (gradient-protocol §7.4).
const (
	DefaultMetricsInterval   = 10 * time.Second
	DefaultPeersPollInterval = 2 * time.Second
	DefaultStopGrace         = 5 * time.Second
	DefaultCacheReplyTimeout = 75 * time.Second
	DefaultTransferTimeout   = 600 * time.Second
)

func (c Config) withDefaults() (Config, error) {
	if c.WorkerID == "" {
		return c, errors.New("worker: no worker ID")
	}
	if c.BaseDir == "" {
		c.BaseDir = DefaultBaseDir
	}
	if c.MaxConcurrentBuilds < 0 {
		return c, fmt.Errorf("worker: max concurrent builds %d", c.MaxConcurrentBuilds)
	}
	c.MaxConcurrentBuilds = cmp.Or(c.MaxConcurrentBuilds, 1)
	if c.Offer == (wire.GradientCapabilities{}) {
		c.Offer = wire.GradientCapabilities{Fetch: true, Eval: true, Build: true}
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Nix == nil {
		c.Nix = nixexec.New(nixexec.Options{Logger: c.Logger})
	}
	c.MetricsInterval = cmp.Or(c.MetricsInterval, DefaultMetricsInterval)
	c.PeersPollInterval = cmp.Or(c.PeersPollInterval, DefaultPeersPollInterval)
	c.StopGrace = cmp.Or(c.StopGrace, DefaultStopGrace)
	c.CacheReplyTimeout = cmp.Or(c.CacheReplyTimeout, DefaultCacheReplyTimeout)
	c.TransferTimeout = cmp.Or(c.TransferTimeout, DefaultTransferTimeout)
	c.RetryDelay = cmp.Or(c.RetryDelay, time.Second)
	c.ProbeInterval = cmp.Or(c.ProbeInterval, DefaultProbeInterval)
	return c, nil
}
