package dashboard

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"html/template"
	"io"
	"net/http"
	"path"
	"strconv"
	"time"
)

//go:embed assets
var assets embed.FS

// pagePolicy lets the page load only its own stylesheet and script, fetch only its own
// series, and be framed by nobody.
const pagePolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
	"base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

var page = template.Must(template.New("fleet.html").Funcs(template.FuncMap{
	"age":    age,
	"optAge": optAge,
	"kpi":    kpiText,
	"label":  func(name string) string { return kpiLabels[name] },
	"time":   func(ms int64) string { return time.UnixMilli(ms).UTC().Format("2006-01-02 15:04:05 UTC") },
}).ParseFS(assets, "assets/fleet.html"))

var kpiLabels = map[string]string{
	"dispatched": "Dispatched", "compiling-now": "Compiling now", "cache-hit-rate": "Cache hit rate",
	"refused": "Refused leases", "leases-outstanding": "Leases outstanding", "oldest-heartbeat": "Oldest heartbeat",
	"never-picked": "Workers never picked",
}

// chart is one history chart the page's script draws from /fleet/series.json.
type chart struct{ Name, Title string }

// charts are drawn in this order; names are the series' stable names.
var charts = []chart{
	{"dispatched", "Dispatched (leases granted)"},
	{"local_fallbacks", "Local fallbacks (leases refused)"},
	{"hits", "Cache hits"},
	{"misses", "Cache misses"},
	{"compiles", "Compiles on workers"},
}

type pageData struct {
	Model
	Names, Ranges []string
	Charts        []chart
}

func renderPage(w io.Writer, m Model) error {
	return page.Execute(w, pageData{Model: m, Names: KPINames, Ranges: Ranges, Charts: charts})
}

// age reads a number of seconds the way an operator says it.
func age(s int64) string {
	switch {
	case s < 120:
		return strconv.FormatInt(s, 10) + " s"
	case s < 2*3600:
		return strconv.FormatInt(s/60, 10) + " min"
	case s < 2*86400:
		return strconv.FormatInt(s/3600, 10) + " h"
	}
	return strconv.FormatInt(s/86400, 10) + " d"
}

func optAge(s *int64, none string) string {
	if s == nil {
		return none
	}
	return age(*s)
}

// ofNouns name what a KPI's Of counts.
var ofNouns = map[string]string{"dispatched": "lease requests", "compiling-now": "slots", "cache-hit-rate": "lookups",
	"refused": "lease requests", "never-picked": "workers"}

// kpiText is a KPI as the page shows it: "3 of 10 lease requests", "83.3 % of 12 lookups".
func kpiText(name string, k KPI) string {
	if k.Value == nil {
		return "–"
	}
	v := strconv.FormatFloat(*k.Value, 'f', -1, 64)
	switch k.Unit {
	case "percent":
		v = strconv.FormatFloat(*k.Value, 'f', 1, 64) + " %"
	case "seconds":
		v = age(int64(*k.Value))
	}
	switch {
	case k.Of == nil:
		return v
	case k.Unit == "seconds":
		return fmt.Sprintf("%s (dropped at %s)", v, age(int64(*k.Of)))
	}
	return fmt.Sprintf("%s of %s %s", v, strconv.FormatFloat(*k.Of, 'f', -1, 64), ofNouns[name])
}

// serveAsset answers the page's stylesheet and script from the embedded files.
func serveAsset(w http.ResponseWriter, r *http.Request, name string) {
	types := map[string]string{"fleet.css": "text/css; charset=utf-8", "fleet.js": "text/javascript; charset=utf-8"}
	ct, ok := types[name]
	if !ok {
		plain(w, http.StatusNotFound, "404: no such asset")
		return
	}
	body, err := assets.ReadFile(path.Join("assets", name))
	if err != nil {
		plain(w, http.StatusInternalServerError, "500: "+err.Error())
		return
	}
	sum := sha256.Sum256(body)
	etag := `"` + hex.EncodeToString(sum[:12]) + `"`
	w.Header().Set("ETag", etag)
	w.Header().Set("Cache-Control", "private, max-age=300")
	if etagMatches(r.Header.Get("If-None-Match"), etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	w.Header().Set("Content-Type", ct)
	w.Write(body)
}
