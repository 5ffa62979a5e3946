package ccstats

import (
	"bytes"
	"strings"
	"testing"
)

const reportLog = `{"outcome":"hit","via":"direct","ms":2,"lookup_ms":1,"io_ms":1}
{"outcome":"hit","via":"preprocessed","ms":4,"cpp_ms":3,"lookup_ms":1,"io_ms":1}
{"outcome":"miss","ms":100,"cpp_ms":5,"store_ms":2,"io_ms":2,"dispatch":"scheduler 10.0.0.5:6674 refused: no-worker"}
{"outcome":"miss","ms":100,"cpp_ms":5,"store_ms":2,"io_ms":2,"dispatch":"scheduler 10.0.0.6:6674 refused: no-worker"}
{"outcome":"miss","ms":100,"cpp_ms":5,"store_ms":2,"io_ms":2,"dispatch":"dispatched","worker":"10.0.0.7:6674"}
{"outcome":"uncacheable","ms":1,"reason":"<script>alert(1)</script>"}
`

func TestTextReportGroupsCausesWithAdvice(t *testing.T) {
	s := foldText(t, reportLog)
	var out bytes.Buffer
	if err := s.Report("/state/invocations.log").WriteText(&out); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	for _, want := range []string{
		"statistics: /state/invocations.log",
		"cache hits                          2 ( 40.0%)",
		"hit latency                  count 2  mean 3.00 ms  p50 2.00 ms  p95 4.00 ms  max 4.00 ms",
		"preprocess latency           count 4  mean 4.50 ms",
		"cache lookup latency         count 2",
		"cache store latency          count 3  mean 2.00 ms",
		"cache I/O latency            count 5",
		"dispatch outcomes by cause:\n  refused:no-worker",
		"       2 ( 66.7%)\n      check: no registered worker has this toolchain",
		"dispatched                                              1 ( 33.3%)",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("report lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "10.0.0.") {
		t.Errorf("the report names a machine:\n%s", text)
	}
}

// TestHTMLReportHasTheSameFiguresEscaped: every figure of the text report is on the page, the
// page fetches nothing, and text from the log is escaped.
func TestHTMLReportHasTheSameFiguresEscaped(t *testing.T) {
	s := foldText(t, reportLog)
	rep := s.Report("/state/<x>/invocations.log")
	var page bytes.Buffer
	if err := rep.WriteHTML(&page); err != nil {
		t.Fatal(err)
	}
	html := page.String()
	var figures []string
	for _, r := range rep.Latencies {
		figures = append(figures, ">"+r.Name+"<", ">"+r.Mean+"<", ">"+r.P50+"<", ">"+r.P95+"<", ">"+r.Max+"<")
	}
	for _, r := range rep.Dispatch {
		figures = append(figures, ">"+string(r.Cause)+"<", ">"+r.Pct+"<")
	}
	for _, r := range rep.Counts {
		figures = append(figures, ">"+r.Label+"<")
	}
	figures = append(figures, "&lt;script&gt;alert(1)&lt;/script&gt;", "/state/&lt;x&gt;/invocations.log")
	for _, want := range figures {
		if !strings.Contains(html, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	for _, external := range []string{"<script", "src=", "href=", "@import", "url("} {
		if strings.Contains(html, external) {
			t.Errorf("page is not self-contained: holds %q", external)
		}
	}
}

func TestEmptyReport(t *testing.T) {
	s := NewSummary()
	var out, page bytes.Buffer
	if err := s.Write(&out); err != nil || !strings.HasPrefix(out.String(), "invocations                         0\n") {
		t.Fatalf("%v %q", err, out.String())
	}
	if strings.Contains(out.String(), "latency") || strings.Contains(out.String(), "dispatch") {
		t.Fatalf("empty report prints empty sections: %q", out.String())
	}
	if err := s.Report("").WriteHTML(&page); err != nil || !strings.Contains(page.String(), "</html>") {
		t.Fatalf("%v %q", err, page.String())
	}
}
