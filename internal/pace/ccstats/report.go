package ccstats

import (
	"bufio"
	"fmt"
	"io"
	"sort"
	"strconv"
)

// Report is a summary laid out for reading, every figure already formatted, so the text of
// --show-stats and the page of --html-stats cannot disagree.
type Report struct {
	Log       string // the log it was folded from; "" leaves the line out
	Counts    []CountRow
	Latencies []LatencyRow
	Reasons   []ReasonRow
	Dispatch  []CauseRow
}

// CountRow is one outcome count; Pct is its share of the row's whole, "" when it has none.
type CountRow struct {
	Label string
	N     int
	Pct   string
}

// LatencyRow is one latency in milliseconds.
type LatencyRow struct {
	Name                string
	Count               uint64
	Mean, P50, P95, Max string
}

// ReasonRow is one reason with its count.
type ReasonRow struct {
	Reason string
	N      int
}

// CauseRow is one dispatch cause: its count, its share of all dispatch outcomes, and what to
// check.
type CauseRow struct {
	Cause Cause
	N     int
	Pct   string
	Check string
}

// Report lays s out; log names the file it came from.
func (s *Summary) Report(log string) Report {
	return Report{Log: log, Counts: s.countRows(), Latencies: s.latencyRows(),
		Reasons: reasonRows(s.Reasons), Dispatch: causeRows(s.Dispatch)}
}

func (s *Summary) countRows() []CountRow {
	cacheable := s.Hits + s.Misses
	rows := []CountRow{
		{"invocations", s.Invocations, ""},
		{"cache hits", s.Hits, pct(s.Hits, cacheable)},
		{"  via direct mode", s.HitsDirect, pct(s.HitsDirect, s.Hits)},
		{"  via preprocessor", s.HitsPrepro, pct(s.HitsPrepro, s.Hits)},
		{"  dependency listings", s.HitsListing, pct(s.HitsListing, s.Hits)},
		{"cache misses", s.Misses, pct(s.Misses, cacheable)},
		{"uncacheable", s.Uncacheable, pct(s.Uncacheable, s.Invocations)},
		{"not a compile (passthrough)", s.Passthrough, pct(s.Passthrough, s.Invocations)},
		{"cache not reached", s.Unavailable, pct(s.Unavailable, s.Invocations)},
		{"fell back to a plain compile", s.Fallbacks, pct(s.Fallbacks, s.Invocations)},
		{"compiler failed", s.CompileFailed, pct(s.CompileFailed, s.Invocations)},
	}
	if s.OtherOutcomes > 0 {
		rows = append(rows, CountRow{"unknown outcome", s.OtherOutcomes, pct(s.OtherOutcomes, s.Invocations)})
	}
	if s.Unreadable > 0 {
		rows = append(rows, CountRow{"unreadable log lines", s.Unreadable, ""})
	}
	return rows
}

func (s *Summary) latencyRows() []LatencyRow {
	var rows []LatencyRow
	for _, l := range []struct {
		name string
		lat  *Latency
	}{{"hit", &s.HitMS}, {"miss", &s.MissMS}, {"preprocess", &s.PreprocessMS},
		{"cache lookup", &s.LookupMS}, {"cache store", &s.StoreMS}, {"cache I/O", &s.CacheMS}} {
		if l.lat.Count == 0 {
			continue
		}
		rows = append(rows, LatencyRow{Name: l.name, Count: l.lat.Count, Mean: msText(l.lat.Mean()),
			P50: msText(l.lat.Percentile(50)), P95: msText(l.lat.Percentile(95)), Max: msText(l.lat.Max())})
	}
	return rows
}

func reasonRows(m map[string]int) []ReasonRow {
	rows := make([]ReasonRow, 0, len(m))
	for k, n := range m {
		rows = append(rows, ReasonRow{k, n})
	}
	sort.Slice(rows, func(i, j int) bool {
		return rows[i].N > rows[j].N || rows[i].N == rows[j].N && rows[i].Reason < rows[j].Reason
	})
	return rows
}

func causeRows(m map[Cause]int) []CauseRow {
	total := 0
	rows := make([]CauseRow, 0, len(m))
	for c, n := range m {
		total += n
		rows = append(rows, CauseRow{Cause: c, N: n, Check: Advice(c)})
	}
	for i := range rows {
		rows[i].Pct = pct(rows[i].N, total)
	}
	sort.Slice(rows, func(i, j int) bool {
		return rows[i].N > rows[j].N || rows[i].N == rows[j].N && rows[i].Cause < rows[j].Cause
	})
	return rows
}

func pct(n, of int) string {
	if of <= 0 {
		return ""
	}
	return strconv.FormatFloat(100*float64(n)/float64(of), 'f', 1, 64) + "%"
}

func msText(ms float64) string { return strconv.FormatFloat(ms, 'f', 2, 64) }

// Write renders the summary as --show-stats prints it.
func (s *Summary) Write(w io.Writer) error { return s.Report("").WriteText(w) }

// WriteText renders the report as plain text.
func (rep Report) WriteText(w io.Writer) error {
	bw := bufio.NewWriter(w)
	if rep.Log != "" {
		fmt.Fprintf(bw, "statistics: %s\n", rep.Log)
	}
	for _, r := range rep.Counts {
		if r.Pct != "" {
			fmt.Fprintf(bw, "%-28s %8d (%6s)\n", r.Label, r.N, r.Pct)
		} else {
			fmt.Fprintf(bw, "%-28s %8d\n", r.Label, r.N)
		}
	}
	for _, r := range rep.Latencies {
		fmt.Fprintf(bw, "%-28s count %d  mean %s ms  p50 %s ms  p95 %s ms  max %s ms\n",
			r.Name+" latency", r.Count, r.Mean, r.P50, r.P95, r.Max)
	}
	if len(rep.Reasons) > 0 {
		fmt.Fprintln(bw, "reasons:")
		for _, r := range rep.Reasons {
			fmt.Fprintf(bw, "  %-48s %8d\n", r.Reason, r.N)
		}
	}
	if len(rep.Dispatch) > 0 {
		fmt.Fprintln(bw, "dispatch outcomes by cause:")
		for _, r := range rep.Dispatch {
			fmt.Fprintf(bw, "  %-48s %8d (%6s)\n      check: %s\n", r.Cause, r.N, r.Pct, r.Check)
		}
	}
	return bw.Flush()
}
