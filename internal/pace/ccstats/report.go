package ccstats

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Summary is the fold of a log.
type Summary struct {
	Invocations   int
	Hits          int
	HitsDirect    int
	HitsPrepro    int
	Misses        int
	Uncacheable   int
	Passthrough   int
	Unavailable   int
	Fallbacks     int
	CompileFailed int
	Unreadable    int // lines that did not parse (a torn line from a crashed writer, say)
	Reasons       map[string]int
	Dispatch      map[string]int
	HitMS, MissMS []float64
}

// Read folds the log in dir. A missing log is an empty summary.
func Read(dir string) (Summary, error) {
	s := Summary{Reasons: map[string]int{}, Dispatch: map[string]int{}}
	f, err := os.Open(filepath.Join(dir, LogName))
	if os.IsNotExist(err) {
		return s, nil
	}
	if err != nil {
		return s, err
	}
	defer f.Close()
	return s, s.fold(f)
}

func (s *Summary) fold(r io.Reader) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		var rec Record
		if json.Unmarshal(sc.Bytes(), &rec) != nil {
			s.Unreadable++
			continue
		}
		s.add(rec)
	}
	return sc.Err()
}

func (s *Summary) add(r Record) {
	s.Invocations++
	switch r.Outcome {
	case Hit:
		s.Hits++
		if r.Via == "direct" {
			s.HitsDirect++
		} else {
			s.HitsPrepro++
		}
		s.HitMS = append(s.HitMS, r.TotalMS)
	case Miss:
		s.Misses++
		s.MissMS = append(s.MissMS, r.TotalMS)
	case Uncacheable:
		s.Uncacheable++
	case Passthrough:
		s.Passthrough++
	case Unavailable:
		s.Unavailable++
	case Fallback:
		s.Fallbacks++
	case Failed:
		s.CompileFailed++
	}
	if r.Reason != "" {
		s.Reasons[string(r.Outcome)+": "+r.Reason]++
	}
	if r.Dispatch != "" {
		s.Dispatch[r.Dispatch]++
	}
}

// Percentile returns the p-th percentile (0..100) of xs by nearest rank, or 0 for none.
func Percentile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	i := int(p/100*float64(len(s))+0.5) - 1
	return s[max(0, min(i, len(s)-1))]
}

// Write renders the summary as --show-stats prints it.
func (s Summary) Write(w io.Writer) {
	cacheable := s.Hits + s.Misses
	row := func(name string, n int, of int) {
		pct := ""
		if of > 0 {
			pct = fmt.Sprintf(" (%5.1f%%)", 100*float64(n)/float64(of))
		}
		fmt.Fprintf(w, "%-28s %8d%s\n", name, n, pct)
	}
	row("invocations", s.Invocations, 0)
	row("cache hits", s.Hits, cacheable)
	row("  via direct mode", s.HitsDirect, s.Hits)
	row("  via preprocessor", s.HitsPrepro, s.Hits)
	row("cache misses", s.Misses, cacheable)
	row("uncacheable", s.Uncacheable, s.Invocations)
	row("not a compile (passthrough)", s.Passthrough, s.Invocations)
	row("cache not reached", s.Unavailable, s.Invocations)
	row("fell back to a plain compile", s.Fallbacks, s.Invocations)
	row("compiler failed", s.CompileFailed, s.Invocations)
	if s.Unreadable > 0 {
		row("unreadable log lines", s.Unreadable, 0)
	}
	s.writeLatency(w, "hit", s.HitMS)
	s.writeLatency(w, "miss", s.MissMS)
	writeCounts(w, "reasons", s.Reasons)
	writeCounts(w, "dispatch outcomes", s.Dispatch)
}

func (s Summary) writeLatency(w io.Writer, name string, xs []float64) {
	if len(xs) == 0 {
		return
	}
	fmt.Fprintf(w, "%-28s p50 %.2f ms  p95 %.2f ms  max %.2f ms\n", name+" latency",
		Percentile(xs, 50), Percentile(xs, 95), Percentile(xs, 100))
}

func writeCounts(w io.Writer, title string, m map[string]int) {
	if len(m) == 0 {
		return
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return m[keys[i]] > m[keys[j]] || m[keys[i]] == m[keys[j]] && keys[i] < keys[j] })
	fmt.Fprintf(w, "%s:\n", title)
	for _, k := range keys {
		fmt.Fprintf(w, "  %-40s %6d\n", strings.TrimSpace(k), m[k])
	}
}
