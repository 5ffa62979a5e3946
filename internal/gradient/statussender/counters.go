package statussender

import (
	"sync/atomic"

	"github.com/buildfleet/buildfleet/internal/gradient/counter"
	"github.com/buildfleet/buildfleet/internal/gradient/forgestatus"
)

// sinkLabels are the label values of the counters: the three forges and the webhook.
var sinkLabels = []string{string(forgestatus.GitHub), string(forgestatus.Gitea), string(forgestatus.GitLab), "webhook"}

// Counters count delivery attempts per forge (or "webhook").
type Counters struct {
	Delivered map[string]*atomic.Uint64
	Failed    map[string]*atomic.Uint64 // given up: a refusal that will not change, or attempts exhausted
	Retried   map[string]*atomic.Uint64 // failed attempts queued again
}

func newCounters() *Counters {
	mk := func() map[string]*atomic.Uint64 {
		m := map[string]*atomic.Uint64{}
		for _, l := range sinkLabels {
			m[l] = new(atomic.Uint64)
		}
		return m
	}
	return &Counters{Delivered: mk(), Failed: mk(), Retried: mk()}
}

func (c *Counters) add(m map[string]*atomic.Uint64, label string) {
	if v := m[label]; v != nil {
		v.Add(1)
	}
}

// Metrics lists the counters under their exposition names, labelled by forge.
func (c *Counters) Metrics() []counter.Metric {
	return []counter.Metric{
		{Name: "gradient_statuses_delivered_total", Help: "Commit statuses and webhook events the receiver accepted (2xx).", Label: "forge", Series: c.Delivered},
		{Name: "gradient_statuses_failed_total", Help: "Commit statuses and webhook events given up: refused for good or out of attempts.", Label: "forge", Series: c.Failed},
		{Name: "gradient_statuses_retried_total", Help: "Failed delivery attempts of commit statuses and webhook events queued again with backoff.", Label: "forge", Series: c.Retried},
	}
}
