package worker

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/lease"
	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// Defaults of pace-node §5 and pace's own choices where it is silent.
const (
	// DefaultProgressInterval: a Progress frame every 5 s while a compile
	// runs (pace-wire §1.13).
	DefaultProgressInterval = 5 * time.Second
	// DefaultCompileTimeout bounds one compile: no lease outlives an hour
	// (lease.MaxLifetime), so no client waits longer.
	DefaultCompileTimeout = lease.MaxLifetime
	// DefaultOutputCap bounds the stdout and the stderr kept per job.
	DefaultOutputCap = 4 << 20
	// DefaultBudgetLimitWindow is how long an endpoint-busy refusal keeps
	// the budget-limited flag up while work still holds the budget: one
	// heartbeat period.
	DefaultBudgetLimitWindow = 20 * time.Second
	// DefaultDrainTimeout is --drain-timeout's default.
	DefaultDrainTimeout = 30 * time.Second
)

// LeaseState is the fleet state lease verification asks on every request,
// as this node's consensus applied it; nothing is cached.
type LeaseState interface {
	Roster() lease.Roster
	// LeaderHeardAt is when a leader of the fleet was last heard (the
	// leader itself reports now); zero means never.
	LeaderHeardAt() time.Time
}

// Config is a worker's configuration. Slots, Budget and Signer are
// required; the rest have defaults.
type Config struct {
	Slots  int    // ≥ 1; the node builds no worker for --slots=0
	Budget uint64 // in-flight byte budget B (DefaultBudget for the default)
	// SessionCap is the node surface's session cap; 0 means
	// wire.DefaultSessionCap. The request ceiling never exceeds it.
	SessionCap       uint32
	Toolchains       SurveyConfig
	AllowCompileArgs []string // --allow-compile-arg
	// VerifyLeases is the node's startup decision (pace-node §5.4): false only
	// for a worker nothing else can reach, and then Leases and Endpoint
	// may be nil.
	VerifyLeases bool
	Leases       LeaseState
	Endpoint     func() string // this worker's current advertised endpoint
	// MovedFrom, if set, says when this worker stopped advertising an endpoint it had before;
	// leases granted for it are honoured until they expire (lease.Context.MovedFrom).
	MovedFrom func(endpoint string) (time.Time, bool)
	// Signer signs replies with the node's identity key (pace-wire §1.15.3).
	Signer lease.Signer
	// ScratchParent is where the scratch root lives; "" means the OS temp
	// dir (TMPDIR relocates it).
	ScratchParent     string
	ProgressInterval  time.Duration
	CompileTimeout    time.Duration
	OutputCap         int
	BudgetLimitWindow time.Duration
	SpentLeases       int // spent-lease set capacity; 0 = lease.DefaultSpentCapacity
	Now               func() time.Time
	Logger            *slog.Logger
}

// ErrInvalidConfig reports a configuration New refuses.
var ErrInvalidConfig = errors.New("invalid worker configuration")

func (c Config) withDefaults() (Config, error) {
	switch {
	case c.Slots < 1:
		return c, fmt.Errorf("%w: %d slots; a worker needs at least one (--slots=0 runs no worker)", ErrInvalidConfig, c.Slots)
	case c.Budget == 0:
		return c, fmt.Errorf("%w: the in-flight byte budget is zero", ErrInvalidConfig)
	case c.Signer == nil:
		return c, fmt.Errorf("%w: no identity key to sign replies with", ErrInvalidConfig)
	case c.VerifyLeases && (c.Leases == nil || c.Endpoint == nil):
		return c, fmt.Errorf("%w: lease verification needs the applied fleet state and the advertised endpoint", ErrInvalidConfig)
	}
	if c.SessionCap == 0 {
		c.SessionCap = wire.DefaultSessionCap
	}
	c.ProgressInterval = orDefault(c.ProgressInterval, DefaultProgressInterval)
	c.CompileTimeout = orDefault(c.CompileTimeout, DefaultCompileTimeout)
	c.BudgetLimitWindow = orDefault(c.BudgetLimitWindow, DefaultBudgetLimitWindow)
	if c.OutputCap <= 0 {
		c.OutputCap = DefaultOutputCap
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c, nil
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}
