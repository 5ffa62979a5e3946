package worker

import (
	"strings"
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/wire"
	"pgregory.net/rapid"
)

// gradient-server §6.3: no more than the per-minute and per-hour budgets are forwarded, and
// once a limit is hit the rest of the build's log is dropped.
func TestLogBudgetNeverExceedsItsLimits(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		b := logBudget{perMinute: 1000, perHour: 5000}
		now := time.Unix(0, 0)
		var perMinute = map[int64]int{}
		total, truncatedAt := 0, -1
		for i := range rapid.IntRange(1, 200).Draw(t, "writes") {
			now = now.Add(time.Duration(rapid.IntRange(0, 20_000).Draw(t, "gap_ms")) * time.Millisecond)
			n := rapid.IntRange(0, 400).Draw(t, "n")
			allowed, hit := b.admit(now, n)
			if allowed < 0 || allowed > n {
				t.Fatalf("allowed %d of %d", allowed, n)
			}
			if truncatedAt >= 0 && allowed > 0 {
				t.Fatalf("forwarded %d bytes after truncation", allowed)
			}
			if hit {
				truncatedAt = i
			}
			perMinute[now.Unix()/60] += allowed
			total += allowed
		}
		if total > 5000*(int(now.Unix()/3600)+1) {
			t.Fatalf("%d bytes forwarded in %v", total, now.Sub(time.Unix(0, 0)))
		}
		for _, v := range perMinute {
			if v > 2*1000 { // fixed windows can straddle a calendar minute
				t.Fatalf("a calendar minute carried %d bytes", v)
			}
		}
	})
}

func TestLogForwarderAppendsOneTruncationNote(t *testing.T) {
	var chunks []string
	f := newLogForwarder("build:1", func(m wire.ClientMessage) error {
		chunks = append(chunks, string(m.(*wire.LogChunk).Data))
		return nil
	})
	f.budget = logBudget{perMinute: 10, perHour: 100}
	f.now = func() time.Time { return time.Unix(100, 0) }
	for range 3 {
		if n, err := f.Write([]byte("0123456")); n != 7 || err != nil {
			t.Fatalf("Write = %d, %v", n, err)
		}
	}
	got := strings.Join(chunks, "")
	if !strings.HasPrefix(got, "0123456012") || strings.Count(got, "log truncated") != 1 || strings.Contains(got[10:], "0123") {
		t.Fatalf("forwarded %q", got)
	}
}
