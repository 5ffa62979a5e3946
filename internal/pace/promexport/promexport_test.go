package promexport

import (
	"strings"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/buildfleet/buildfleet/internal/pace/counter"
)

// Every way a component describes a series renders with its own help text and kind: an
// atomic counter, a gauge read at scrape time, and a labelled family whose absent label sets
// render nothing.
func TestEveryKindOfMetricRenders(t *testing.T) {
	var hits atomic.Uint64
	hits.Add(3)
	closed := map[string]*atomic.Uint64{"idle": new(atomic.Uint64), "peer": new(atomic.Uint64)}
	closed["peer"].Add(2)
	r := New()
	r.Add(
		counter.Metric{Name: "pace_test_hits_total", Help: "Hits.", Value: &hits},
		counter.GaugeFunc("pace_test_slots", "Slots.", func() float64 { return 4 }),
		counter.Labelled("pace_test_closed_total", "Closed, by reason.", "reason", closed),
		counter.Metric{Name: "pace_test_leader", Help: "The leader.", Kind: counter.Gauge, Labels: []string{"leader"},
			Samples: func() []counter.Sample { return nil }},
	)
	want := `
# HELP pace_test_closed_total Closed, by reason.
# TYPE pace_test_closed_total counter
pace_test_closed_total{reason="idle"} 0
pace_test_closed_total{reason="peer"} 2
# HELP pace_test_hits_total Hits.
# TYPE pace_test_hits_total counter
pace_test_hits_total 3
# HELP pace_test_slots Slots.
# TYPE pace_test_slots gauge
pace_test_slots 4
`
	names := []string{"pace_test_hits_total", "pace_test_slots", "pace_test_closed_total", "pace_test_leader"}
	if err := testutil.GatherAndCompare(r.Gatherer(), strings.NewReader(want), names...); err != nil {
		t.Fatal(err)
	}
}

// A name registered twice, or a metric with no source or two, is refused at registration.
func TestMisdescribedMetricsPanic(t *testing.T) {
	var v atomic.Uint64
	for name, ms := range map[string][]counter.Metric{
		"twice":     {{Name: "pace_x_total", Help: "X.", Value: &v}, {Name: "pace_x_total", Help: "X.", Value: &v}},
		"no source": {{Name: "pace_y_total", Help: "Y."}},
		"two":       {{Name: "pace_z", Help: "Z.", Value: &v, Read: func() float64 { return 0 }}},
		"no help":   {{Name: "pace_w_total", Value: &v}},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: registered without a panic", name)
				}
			}()
			New().Add(ms...)
		}()
	}
}
