package store

import "time"

// Policy holds the job-loop limits of gradient-server §6.4 and gradient-server §6.5. Zero
// fields take the defaults.
type Policy struct {
	// MaxBuildAttempts is build.maxAttempts: a transient failure on the last attempt makes
	// the build FailedPermanent (3).
	MaxBuildAttempts int
	// RetryBackoff is build.retryBackoffSecs, doubled after each transient failure (30 s).
	RetryBackoff time.Duration
	// LostWorkerLimit: a build lost with its worker this many times in a row becomes
	// FailedPermanent (10).
	LostWorkerLimit int
	// MaxEvalAttempts: an evaluation whose flake job fails transiently this many times
	// fails (3).
	MaxEvalAttempts int
	// MaxEvalDispatches: an evaluation lost with its worker after this many dispatches
	// fails (10).
	MaxEvalDispatches int
	// InputsUnavailableLimit: InputsUnavailable loops before a build fails permanently (3).
	InputsUnavailableLimit int
	// MaxLogBytes caps one attempt's stored log; AppendBuildLog refuses past it (256 MiB:
	// the worker's own 64 MiB/hour limit over the 4 h default timeout).
	MaxLogBytes int64
}

// DefaultPolicy is the defaults gradient-server §6.4 and gradient-server §6.5 give.
func DefaultPolicy() Policy {
	return Policy{
		MaxBuildAttempts:       3,
		RetryBackoff:           30 * time.Second,
		LostWorkerLimit:        10,
		MaxEvalAttempts:        3,
		MaxEvalDispatches:      10,
		InputsUnavailableLimit: 3,
		MaxLogBytes:            256 << 20,
	}
}

// withDefaults fills zero fields from DefaultPolicy.
func (p Policy) withDefaults() Policy {
	d := DefaultPolicy()
	fill := func(v *int, def int) {
		if *v <= 0 {
			*v = def
		}
	}
	fill(&p.MaxBuildAttempts, d.MaxBuildAttempts)
	fill(&p.LostWorkerLimit, d.LostWorkerLimit)
	fill(&p.MaxEvalAttempts, d.MaxEvalAttempts)
	fill(&p.MaxEvalDispatches, d.MaxEvalDispatches)
	fill(&p.InputsUnavailableLimit, d.InputsUnavailableLimit)
	if p.RetryBackoff <= 0 {
		p.RetryBackoff = d.RetryBackoff
	}
	if p.MaxLogBytes <= 0 {
		p.MaxLogBytes = d.MaxLogBytes
	}
	return p
}

// Backoff is the delay before retry number n (n = 1 after the first transient failure):
// RetryBackoff doubling each time, capped at 24 h so a large limit cannot overflow.
func (p Policy) Backoff(n int) time.Duration {
	d := p.RetryBackoff
	for i := 1; i < n && d < 24*time.Hour; i++ {
		d *= 2
	}
	return min(d, 24*time.Hour)
}

// Options configure a backend at Open.
type Options struct {
	// Clock stamps every row and decides retry readiness; time.Now when nil.
	Clock func() time.Time
	// Policy holds the gradient-server §6.4 limits.
	Policy Policy
}

// Option changes Options.
type Option func(*Options)

// WithClock sets the clock (tests inject a manual one).
func WithClock(now func() time.Time) Option { return func(o *Options) { o.Clock = now } }

// WithPolicy sets the job-loop limits; zero fields keep their defaults.
func WithPolicy(p Policy) Option { return func(o *Options) { o.Policy = p } }

// BuildOptions applies opts over the defaults. Backends call it in Open.
func BuildOptions(opts ...Option) Options {
	o := Options{Clock: time.Now}
	for _, opt := range opts {
		opt(&o)
	}
	if o.Clock == nil {
		o.Clock = time.Now
	}
	o.Policy = o.Policy.withDefaults()
	return o
}
