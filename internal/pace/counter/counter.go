// Package counter is pace's one way to describe what a component exports to a daemon's
// metrics: a Metric names one series or one labelled family with its exact Prometheus name,
// its help text, whether it is a counter or a gauge, and where its value comes from. Each
// component keeps its own plain atomics (it counts, it owns them) or reads its state when
// scraped, and lists them as Metrics; no component imports Prometheus. Package promexport is
// the one exporter: every pace daemon registers its components' lists through it, so every
// name is registered once and every unlabelled series renders from the start, at zero.
package counter

import "sync/atomic"

// Kind is how a Metric is exported.
type Kind uint8

// Kinds. The zero value is Counter, so a plain counter literal needs no Kind.
const (
	Counter Kind = iota // only goes up; its name ends in _total
	Gauge               // goes up and down
)

// Metric is one exported series, or one family of series told apart by labels. Exactly one
// of Value, Read and Samples gives its values.
type Metric struct {
	Name string // the exact Prometheus name
	Help string // one line, its own
	Kind Kind

	// Value is the atomic the component counts in (one unlabelled series).
	Value *atomic.Uint64
	// Read computes the one unlabelled series' value at scrape time.
	Read func() float64
	// Labels names the family's labels; Samples reads its series at scrape time, each with
	// one value per label. A label set Samples leaves out is absent, not 0.
	Labels  []string
	Samples func() []Sample
}

// Sample is one series of a labelled family: its label values, in Labels order, and value.
type Sample struct {
	LabelValues []string
	Value       float64
}

// Labelled is a family whose series are fixed atomics, one per label value of its single
// label, all rendered from the start.
func Labelled(name, help, label string, series map[string]*atomic.Uint64) Metric {
	return Metric{Name: name, Help: help, Labels: []string{label}, Samples: func() []Sample {
		out := make([]Sample, 0, len(series))
		for v, n := range series {
			out = append(out, Sample{LabelValues: []string{v}, Value: float64(n.Load())})
		}
		return out
	}}
}

// GaugeFunc is an unlabelled gauge read at scrape time.
func GaugeFunc(name, help string, read func() float64) Metric {
	return Metric{Name: name, Help: help, Kind: Gauge, Read: read}
}
