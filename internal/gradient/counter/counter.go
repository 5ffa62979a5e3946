// Package counter is gradient's one way to describe a counter it exports: a Metric names one
// series, or one family told apart by a single label, with its exact Prometheus name and its
// own help text, over the plain atomics the component counts in. Components import no
// Prometheus; package promexport is the one exporter, and every series renders from the
// start, at zero.
package counter

import "sync/atomic"

// Metric is one counter, or one family of counters by a label. Exactly one of Value and
// Series is set.
type Metric struct {
	Name string // the exact Prometheus name, ending in _total
	Help string // one line, its own

	Value *atomic.Uint64 // one unlabelled series

	Label  string                    // the family's label, with Series
	Series map[string]*atomic.Uint64 // label value -> its counter
}
