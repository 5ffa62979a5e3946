package promexport

import (
	"strings"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/buildfleet/buildfleet/internal/gradient/counter"
)

// A plain counter and a family by reason render from the start, each with its own help.
func TestCountersRenderFromZero(t *testing.T) {
	var started atomic.Uint64
	started.Add(2)
	r := New()
	r.Add(
		counter.Metric{Name: "gradient_test_started_total", Help: "Started.", Value: &started},
		counter.Metric{Name: "gradient_test_errors_total", Help: "Errors, by reason.", Label: "reason",
			Series: map[string]*atomic.Uint64{"store": new(atomic.Uint64), "timeout": new(atomic.Uint64)}},
	)
	want := `
# HELP gradient_test_errors_total Errors, by reason.
# TYPE gradient_test_errors_total counter
gradient_test_errors_total{reason="store"} 0
gradient_test_errors_total{reason="timeout"} 0
# HELP gradient_test_started_total Started.
# TYPE gradient_test_started_total counter
gradient_test_started_total 2
`
	if err := testutil.GatherAndCompare(r.Gatherer(), strings.NewReader(want), "gradient_test_started_total", "gradient_test_errors_total"); err != nil {
		t.Fatal(err)
	}
}

// A metric with both sources, or none, or no help, is refused at registration.
func TestMisdescribedCountersPanic(t *testing.T) {
	var v atomic.Uint64
	for name, m := range map[string]counter.Metric{
		"none":     {Name: "gradient_a_total", Help: "A."},
		"both":     {Name: "gradient_b_total", Help: "B.", Value: &v, Label: "reason", Series: map[string]*atomic.Uint64{}},
		"no help":  {Name: "gradient_c_total", Value: &v},
		"no label": {Name: "gradient_d_total", Help: "D.", Series: map[string]*atomic.Uint64{}},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: registered without a panic", name)
				}
			}()
			New().Add(m)
		}()
	}
}
