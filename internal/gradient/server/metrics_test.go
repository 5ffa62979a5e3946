package server

import (
	"net/http/httptest"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/buildfleet/buildfleet/internal/gradient/wire"
)

// The metrics handler shows the server's counters and the cache traffic of every session, at
// zero before anything happened and counted after, each family with a help line of its own.
func TestMetricsShowServerAndCacheCounters(t *testing.T) {
	r := newCacheRig(t, Config{})
	before := scrapeMetrics(t, r.srv)
	for _, s := range []struct {
		name   string
		labels []string
	}{
		{"gradient_cache_sessions_started_total", nil}, {"gradient_cache_queries_total", nil},
		{"gradient_cache_query_errors_total", []string{"reason", "store"}}, {"gradient_handshakes_rejected_496_total", nil},
	} {
		if v, ok := seriesValue(before, s.name, s.labels...); !ok || v != 0 {
			t.Errorf("before any session, %s%v = %v (exposed %v), want 0", s.name, s.labels, v, ok)
		}
	}
	helps := map[string]string{}
	for name, fam := range before {
		if !strings.HasPrefix(name, "gradient_") {
			continue
		}
		if other, ok := helps[fam.GetHelp()]; ok {
			t.Errorf("%s and %s share the help line %q", name, other, fam.GetHelp())
		}
		helps[fam.GetHelp()] = name
	}
	have, _ := r.put("have", r.pub, 100)
	for range 2 {
		p := r.mustDial("pub", "")
		p.query(wire.QueryModeNormal, have)
	}
	after := scrapeMetrics(t, r.srv)
	for _, name := range []string{"gradient_cache_sessions_started_total", "gradient_cache_queries_total"} {
		if v, _ := seriesValue(after, name); v != 2 {
			t.Errorf("after two sessions with a query each, %s = %v, want 2", name, v)
		}
	}
}

// scrapeMetrics reads the handler's exposition through the Prometheus text parser.
func scrapeMetrics(t *testing.T, srv *Server) map[string]*dto.MetricFamily {
	t.Helper()
	rec := httptest.NewRecorder()
	srv.MetricsHandler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(rec.Body)
	if err != nil {
		t.Fatalf("parsing /metrics: %v", err)
	}
	return families
}

// seriesValue is the counter name with exactly the labels given as name, value pairs.
func seriesValue(families map[string]*dto.MetricFamily, name string, labels ...string) (float64, bool) {
	for _, m := range families[name].GetMetric() {
		if len(m.GetLabel())*2 != len(labels) {
			continue
		}
		match := true
		for i, l := range m.GetLabel() {
			match = match && l.GetName() == labels[2*i] && l.GetValue() == labels[2*i+1]
		}
		if match {
			return m.GetCounter().GetValue(), true
		}
	}
	return 0, false
}
