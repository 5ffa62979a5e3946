package ccstats

import (
	"html/template"
	"io"
	"sync"
)

// page is the --html-stats page: one file with its style inline and nothing fetched, so it
// can be mailed or attached to a ticket. html/template escapes every figure and reason, which
// come from a log any local process may have written. It is parsed on first use: every compile
// starts this binary, and only --html-stats needs the page.
var page = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("stats").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>pace-cc statistics</title>
<style>
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; margin-bottom: 1.5em; }
th, td { padding: 0.2em 0.8em; border-bottom: 1px solid #ddd; text-align: left; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
code { font-size: 0.95em; }
.check { color: #555; }
</style>
</head>
<body>
<h1>pace-cc statistics</h1>
{{with .Log}}<p>Folded from <code>{{.}}</code>.</p>{{end}}
<h2>Outcomes</h2>
<table>
<tr><th>outcome</th><th>count</th><th>share</th></tr>
{{range .Counts}}<tr><td>{{.Label}}</td><td class="n">{{.N}}</td><td class="n">{{.Pct}}</td></tr>
{{end}}</table>
{{if .Latencies}}<h2>Latency (ms)</h2>
<table>
<tr><th>phase</th><th>count</th><th>mean</th><th>p50</th><th>p95</th><th>max</th></tr>
{{range .Latencies}}<tr><td>{{.Name}}</td><td class="n">{{.Count}}</td><td class="n">{{.Mean}}</td><td class="n">{{.P50}}</td><td class="n">{{.P95}}</td><td class="n">{{.Max}}</td></tr>
{{end}}</table>
{{end}}{{if .Reasons}}<h2>Reasons</h2>
<table>
<tr><th>reason</th><th>count</th></tr>
{{range .Reasons}}<tr><td>{{.Reason}}</td><td class="n">{{.N}}</td></tr>
{{end}}</table>
{{end}}{{if .Dispatch}}<h2>Dispatch outcomes by cause</h2>
<table>
<tr><th>cause</th><th>count</th><th>share</th><th>what to check</th></tr>
{{range .Dispatch}}<tr><td><code>{{.Cause}}</code></td><td class="n">{{.N}}</td><td class="n">{{.Pct}}</td><td class="check">{{.Check}}</td></tr>
{{end}}</table>
{{end}}</body>
</html>
`))
})

// WriteHTML renders the report as one self-contained HTML page.
func (rep Report) WriteHTML(w io.Writer) error { return page().Execute(w, rep) }
