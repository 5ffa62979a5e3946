// Package counter is the shape in which pace's components hand their counters to a daemon's
// metrics registry: each component keeps plain atomics (it counts, it owns them) and lists
// them with their exact Prometheus names, so no component imports Prometheus and every series
// renders from the start, at zero.
package counter

import "sync/atomic"

// Metric is one counter: its exact series name, a one-line help text, and the value.
type Metric struct {
	Name  string
	Help  string
	Value *atomic.Uint64
}
