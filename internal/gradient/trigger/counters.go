package trigger

import (
	"sync/atomic"

	"github.com/buildfleet/buildfleet/internal/gradient/counter"
	"github.com/buildfleet/buildfleet/internal/gradient/forgehook"
)

// Label values of the counters (gradient-server §11.5).
const (
	sourcePoll = "poll"

	outcomeQueued    = "queued"
	outcomeDuplicate = "duplicate"
	ignoredRef       = "ref" // a ref or pull request base the project does not follow

	causeUnknownForge     = "unknown_forge"
	causeTooLarge         = "too_large"
	causeMissingSignature = "missing_signature"
	causeBusy             = "busy"
	causeUnknownProject   = "unknown_project"
	causeNoSecret         = "no_secret"
	causeBadSignature     = "bad_signature"
	causeMalformed        = "malformed"
	causeInternal         = "internal"
)

// Counters count polls, deliveries and the evaluations they started.
type Counters struct {
	Polls       map[string]*atomic.Uint64 // outcome: ok, failed
	Deliveries  map[string]*atomic.Uint64 // verified: queued, duplicate, ignored_<reason>
	Refused     map[string]*atomic.Uint64 // refused deliveries by cause
	Evaluations map[string]*atomic.Uint64 // evaluations started, by trigger
}

func series(names ...string) map[string]*atomic.Uint64 {
	m := make(map[string]*atomic.Uint64, len(names))
	for _, n := range names {
		m[n] = new(atomic.Uint64)
	}
	return m
}

func newCounters() *Counters {
	sources := []string{sourcePoll}
	for _, f := range forgehook.Forges {
		sources = append(sources, string(f))
	}
	return &Counters{
		Polls: series("ok", "failed"),
		Deliveries: series(outcomeQueued, outcomeDuplicate, "ignored_"+forgehook.ReasonEvent,
			"ignored_"+forgehook.ReasonDeleted, "ignored_"+forgehook.ReasonFork, "ignored_"+ignoredRef),
		Refused: series(causeUnknownForge, causeTooLarge, causeMissingSignature, causeBusy, causeUnknownProject,
			causeNoSecret, causeBadSignature, causeMalformed, causeInternal),
		Evaluations: series(sources...),
	}
}

func (c *Counters) evaluations(source string) *atomic.Uint64 { return c.Evaluations[source] }

// Metrics lists the counters under their exposition names.
func (c *Counters) Metrics() []counter.Metric {
	return []counter.Metric{
		{Name: "gradient_trigger_polls_total", Help: "git ls-remote polls of a project's repository, by outcome.", Label: "outcome", Series: c.Polls},
		{Name: "gradient_webhook_deliveries_total", Help: "Webhook deliveries whose signature verified, by what came of them.", Label: "outcome", Series: c.Deliveries},
		{Name: "gradient_webhook_refused_total", Help: "Webhook deliveries refused, by cause.", Label: "cause", Series: c.Refused},
		{Name: "gradient_evaluations_triggered_total", Help: "Evaluations started by a poll or a webhook, by trigger.", Label: "trigger", Series: c.Evaluations},
	}
}
