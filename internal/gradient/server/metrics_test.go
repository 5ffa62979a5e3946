package server

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/buildfleet/buildfleet/internal/gradient/wire"
)

// The metrics handler shows the server's counters and the cache traffic of every session, at
// zero before anything happened and counted after.
func TestMetricsShowServerAndCacheCounters(t *testing.T) {
	r := newCacheRig(t, Config{})
	scrape := func() string {
		rec := httptest.NewRecorder()
		r.srv.MetricsHandler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
		body, _ := io.ReadAll(rec.Body)
		return string(body)
	}
	before := scrape()
	for _, line := range []string{"gradient_cache_sessions_started_total 0", "gradient_cache_queries_total 0",
		`gradient_cache_query_errors_total{reason="store"} 0`, "gradient_handshakes_rejected_496_total 0"} {
		if !strings.Contains(before, line+"\n") {
			t.Errorf("before any session, /metrics lacks %q", line)
		}
	}
	have, _ := r.put("have", r.pub, 100)
	for range 2 {
		p := r.mustDial("pub", "")
		p.query(wire.QueryModeNormal, have)
	}
	after := scrape()
	for _, line := range []string{"gradient_cache_sessions_started_total 2", "gradient_cache_queries_total 2"} {
		if !strings.Contains(after, line+"\n") {
			t.Errorf("after two sessions with a query each, /metrics lacks %q:\n%s", line, grepGradient(after))
		}
	}
}

func grepGradient(text string) string {
	var keep []string
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, "gradient_") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}
