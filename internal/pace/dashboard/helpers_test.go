package dashboard

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/scheduler"
	"github.com/buildfleet/buildfleet/internal/pace/verbs"
)

// fakeSource is a node as the dashboard sees it, with figures a test sets.
type fakeSource struct {
	lead      Leadership
	facts     Facts
	view      any
	seriesErr error
	asked     []string // ranges Series was asked for
}

func (f *fakeSource) Leadership() Leadership    { return f.lead }
func (f *fakeSource) Facts(now time.Time) Facts { f.facts.Now = now; return f.facts }
func (f *fakeSource) Series(r string, _ time.Time) (any, error) {
	f.asked = append(f.asked, r)
	return f.view, f.seriesErr
}

// at is 12:00:45.5 UTC: 15 s to the end of the minute (rounded up).
var at = time.Date(2030, 1, 2, 12, 0, 45, 500_000_000, time.UTC)

func sampleFacts() Facts {
	hits, misses := verbs.Some[uint64](30), verbs.Some[uint64](10)
	return Facts{NodeID: "n1", ClusterID: "c0ffee", Term: 4, LeaseLifetime: 10 * time.Minute,
		Members: []Member{
			{ID: "n2", Seat: "voter", RaftEndpoint: "10.0.0.2:6680", NodeEndpoint: "10.0.0.2:6674", Endpoints: "announced", Key: "k2"},
			{ID: "n1", Seat: "voter", RaftEndpoint: "10.0.0.1:6680", NodeEndpoint: "10.0.0.1:6674", Endpoints: "announced", Key: "k1"},
			{ID: "n3", Seat: "learner", NodeEndpoint: "10.0.0.3:6674", Endpoints: "announced", Key: "k3"},
		},
		Scheduler: scheduler.Snapshot{
			Machines: []scheduler.MachineRow{
				{NodeID: "n1", Registrations: 1, Slots: 4, InFlight: 1, LastSeenAge: 5 * time.Second,
					Load: verbs.Load{Cache: verbs.CacheLoad{Hits: hits, Misses: misses}}},
				{NodeID: "n2", Registrations: 1, Slots: 2, LastSeenAge: 40 * time.Second},
			},
			Workers: []scheduler.WorkerRow{
				{NodeID: "n1", Fingerprint: "fp-gcc", Endpoint: "10.0.0.1:6674", Label: "gcc 12", Slots: 4, InFlight: 1,
					Offerable: 3, RegisteredAge: time.Hour, Picked: true, LastPickedAge: 7 * time.Second},
				{NodeID: "n2", Fingerprint: "fp-gcc", Endpoint: "10.0.0.2:6674", Label: "gcc 12", Slots: 2,
					Offerable: 0, LimitedBy: "cpu", RegisteredAge: time.Minute},
			},
			Leases:            []scheduler.LeaseRow{{Key: "k-old", Fingerprint: "fp-gcc", Endpoint: "10.0.0.1:6674", Age: 9 * time.Minute, ExpiresIn: time.Minute}},
			LeasesOutstanding: 1,
		},
		Counts: Counts{Granted: 7, NoWorker: 2, Withdrawn: 1},
	}
}

func newTestHandler(t *testing.T, src *fakeSource, token string) *Handler {
	t.Helper()
	cfg := Config{Source: src, Now: func() time.Time { return at }}
	if token != "" {
		tok, err := NewToken(token)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Token = tok
	}
	h, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// get runs one request through h, with header pairs.
func get(h http.Handler, target string, header ...string) (*http.Response, string) {
	req := httptest.NewRequest(http.MethodGet, target, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	resp := rec.Result()
	body, _ := io.ReadAll(resp.Body)
	return resp, string(body)
}

func leaderSource() *fakeSource {
	return &fakeSource{lead: Leadership{Leading: true, NodeID: "n1", LeaderID: "n1"}, facts: sampleFacts(),
		view: map[string]any{"range": "1h", "step_seconds": 60, "start_unix_ms": 0, "series": []any{}}}
}
