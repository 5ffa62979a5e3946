package dashboard

import (
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
)

func TestAFollowerNamesTheLeaderAndLinksNowhere(t *testing.T) {
	src := &fakeSource{lead: Leadership{NodeID: "n2", LeaderID: "n1", LeaderScheduler: "10.0.0.1:6674"}}
	h := newTestHandler(t, src, "")
	for _, route := range []string{"/fleet", "/fleet.json", "/fleet.txt", "/fleet/series.json?range=1h"} {
		resp, body := get(h, route)
		if resp.StatusCode != http.StatusServiceUnavailable {
			t.Fatalf("%s: %d", route, resp.StatusCode)
		}
		if !strings.Contains(body, "n1") || !strings.Contains(body, "10.0.0.1:6674") || !strings.Contains(body, "n2") {
			t.Errorf("%s: the answer does not name the leader and its scheduler endpoint: %s", route, body)
		}
		if resp.Header.Get("Location") != "" || strings.Contains(body, "http") || strings.Contains(body, "href") {
			t.Errorf("%s: a redirect or a link: %q %s", route, resp.Header.Get("Location"), body)
		}
	}
	_, body := get(h, "/fleet.txt")
	for line := range strings.Lines(body) {
		if !strings.HasPrefix(line, "#") {
			t.Errorf("a follower's /fleet.txt line is not a comment: %q", line)
		}
	}
	var j map[string]string
	_, body = get(h, "/fleet.json")
	if err := json.Unmarshal([]byte(body), &j); err != nil || j["leader"] != "n1" || j["leader_scheduler_endpoint"] != "10.0.0.1:6674" {
		t.Errorf("json: %v %v", err, j)
	}
	src.lead = Leadership{NodeID: "n2"}
	if resp, body := get(h, "/fleet"); resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(body, "election") {
		t.Errorf("during an election: %d %s", resp.StatusCode, body)
	}
}

func TestTextSectionsAreSelectedAndUnknownOnesRefusedByName(t *testing.T) {
	h := newTestHandler(t, leaderSource(), "")
	resp, body := get(h, "/fleet.txt?section=workers")
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/tab-separated-values") {
		t.Fatalf("%d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	lines := strings.Split(strings.TrimSuffix(body, "\n"), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "machine\tfingerprint\t") || !strings.HasPrefix(lines[1], "n1\tfp-gcc\tgcc 12\t") {
		t.Fatalf("section workers:\n%s", body)
	}
	resp, body = get(h, "/fleet.txt?section=wrokers")
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("unknown section: %d", resp.StatusCode)
	}
	for _, s := range Sections {
		if !strings.Contains(body, s) {
			t.Errorf("the refusal does not name %q: %s", s, body)
		}
	}
	_, all := get(h, "/fleet.txt")
	for _, s := range Sections {
		if !strings.Contains(all, "\n# section "+s+"\n") {
			t.Errorf("the full text lacks section %s", s)
		}
	}
}

func TestTextEscapesWhatWouldBreakATable(t *testing.T) {
	src := leaderSource()
	src.facts.Scheduler.Workers[0].Label = "evil\tcolumn\nrow\rcr\\slash"
	h := newTestHandler(t, src, "")
	_, body := get(h, "/fleet.txt?section=workers")
	lines := strings.Split(strings.TrimSuffix(body, "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d lines:\n%s", len(lines), body)
	}
	for _, l := range lines {
		if n := strings.Count(l, "\t"); n != 11 {
			t.Errorf("%d tabs in %q", n, l)
		}
	}
	if !strings.Contains(lines[1], `evil\tcolumn\nrow\rcr\\slash`) {
		t.Errorf("escaped label not found: %q", lines[1])
	}
}

func TestAnswersCarryAnETagAndA304ForIt(t *testing.T) {
	src := leaderSource()
	h := newTestHandler(t, src, "")
	for _, route := range []string{"/fleet", "/fleet.json", "/fleet.txt", "/fleet/series.json?range=1h"} {
		resp, body := get(h, route)
		etag := resp.Header.Get("ETag")
		if resp.StatusCode != http.StatusOK || etag == "" || body == "" {
			t.Fatalf("%s: %d etag %q", route, resp.StatusCode, etag)
		}
		if cc := resp.Header.Get("Cache-Control"); cc != "private, max-age=15" {
			t.Errorf("%s: Cache-Control %q, want to the end of the minute (15 s)", route, cc)
		}
		resp, body = get(h, route, "If-None-Match", `"other", `+etag)
		if resp.StatusCode != http.StatusNotModified || body != "" || resp.Header.Get("ETag") != etag {
			t.Errorf("%s: revalidation %d, %d bytes", route, resp.StatusCode, len(body))
		}
		if resp, _ := get(h, route, "If-None-Match", `"stale"`); resp.StatusCode != http.StatusOK {
			t.Errorf("%s: a stale ETag answered %d", route, resp.StatusCode)
		}
	}
	_, _ = get(h, "/fleet.json")
	before, _ := get(h, "/fleet.json")
	src.facts.Counts.Granted++
	after, _ := get(h, "/fleet.json")
	if before.Header.Get("ETag") == after.Header.Get("ETag") {
		t.Error("the ETag did not change with the figures")
	}
}

func TestSeriesRangesAreCheckedAndPassedOn(t *testing.T) {
	src := leaderSource()
	h := newTestHandler(t, src, "")
	resp, body := get(h, "/fleet/series.json?range=3h")
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("unknown range: %d", resp.StatusCode)
	}
	for _, r := range Ranges {
		if !strings.Contains(body, r) {
			t.Errorf("the refusal does not name %q: %s", r, body)
		}
	}
	get(h, "/fleet/series.json")
	get(h, "/fleet/series.json?range=7d")
	if !slices.Equal(src.asked, []string{"1h", "7d"}) {
		t.Fatalf("ranges asked: %v", src.asked)
	}
	_, body = get(h, "/fleet/series.json?range=7d")
	var v map[string]any
	if err := json.Unmarshal([]byte(body), &v); err != nil || v["step_seconds"] != float64(60) {
		t.Fatalf("%v %s", err, body)
	}
	src.seriesErr = errors.New("no history")
	if resp, _ := get(h, "/fleet/series.json"); resp.StatusCode != http.StatusInternalServerError {
		t.Fatalf("a failing source: %d", resp.StatusCode)
	}
}

func TestTheJSONCarriesEveryKPI(t *testing.T) {
	h := newTestHandler(t, leaderSource(), "")
	_, body := get(h, "/fleet.json")
	var m struct {
		KPI map[string]map[string]json.RawMessage `json:"kpi"`
	}
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		t.Fatal(err)
	}
	for _, name := range KPINames {
		k, ok := m.KPI[name]
		if !ok || k["value"] == nil || k["unit"] == nil || k["of"] == nil {
			t.Errorf("kpi %s: %v", name, k)
		}
	}
	if string(m.KPI["cache-hit-rate"]["value"]) != "75" || string(m.KPI["dispatched"]["of"]) != "10" {
		t.Errorf("cache-hit-rate %s, dispatched of %s", m.KPI["cache-hit-rate"]["value"], m.KPI["dispatched"]["of"])
	}
}

func TestThePageIsServedWithItsOwnAssetsOnly(t *testing.T) {
	h := newTestHandler(t, leaderSource(), "")
	resp, body := get(h, "/fleet")
	if !strings.Contains(resp.Header.Get("Content-Security-Policy"), "script-src 'self'") {
		t.Errorf("CSP %q", resp.Header.Get("Content-Security-Policy"))
	}
	for _, want := range []string{`data-machine="n1"`, `data-machine="n2"`, `data-machine="n3"`, `data-worker="n2"`,
		`data-series="dispatched"`, "/fleet/static/fleet.js", "<noscript>", "external-cpu", "k-old"} {
		if !strings.Contains(body, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if strings.Contains(body, "<script>") || strings.Contains(body, "style=") {
		t.Error("inline script or style in the page")
	}
	for _, a := range []string{"fleet.js", "fleet.css"} {
		if resp, _ := get(h, "/fleet/static/"+a); resp.StatusCode != http.StatusOK {
			t.Errorf("%s: %d", a, resp.StatusCode)
		}
	}
	if resp, _ := get(h, "/fleet/static/../doc.go"); resp.StatusCode != http.StatusNotFound {
		t.Errorf("an asset outside the list: %d", resp.StatusCode)
	}
	req, _ := http.NewRequest(http.MethodPost, "/fleet", nil)
	rec := &recorder{header: http.Header{}}
	h.ServeHTTP(rec, req)
	if rec.status != http.StatusMethodNotAllowed {
		t.Errorf("POST: %d", rec.status)
	}
}

type recorder struct {
	header http.Header
	status int
}

func (r *recorder) Header() http.Header         { return r.header }
func (r *recorder) Write(b []byte) (int, error) { return len(b), nil }
func (r *recorder) WriteHeader(s int)           { r.status = s }
