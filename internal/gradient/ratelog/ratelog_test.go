package ratelog

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/buildfleet/buildfleet/internal/gradient/clocktest"
)

func newLogged(cfg Config) (*slog.Logger, *Handler, *bytes.Buffer) {
	var buf bytes.Buffer
	h := New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo}), cfg)
	return slog.New(h), h, &buf
}

func lines(buf *bytes.Buffer) []string {
	return strings.Split(strings.TrimSpace(buf.String()), "\n")
}

// A burst passes, the rest is dropped, and the next record that passes says how many were.
func TestBudget(t *testing.T) {
	clock := clocktest.New(time.Unix(1000, 0))
	log, h, buf := newLogged(Config{Burst: 3, Every: time.Second, Now: clock.Now})
	for i := range 10 {
		log.Warn("malformed first message", "i", i)
	}
	if got := lines(buf); len(got) != 3 || h.Suppressed() != 7 {
		t.Fatalf("passed %d lines, suppressed %d; want 3 and 7:\n%s", len(got), h.Suppressed(), buf)
	}
	clock.Advance(time.Second)
	log.With("remote", "10.0.0.1:5").Warn("malformed first message", "i", 10)
	got := lines(buf)
	if len(got) != 4 || !strings.Contains(got[3], "suppressed=7") || !strings.Contains(got[3], "remote=10.0.0.1:5") {
		t.Fatalf("the line after the pause = %q, want it to carry suppressed=7", got[len(got)-1])
	}
	log.Warn("again")
	if len(lines(buf)) != 4 {
		t.Fatal("a record passed with the budget spent")
	}
}

// Records below the next handler's level cost nothing.
func TestDisabledRecordsAreFree(t *testing.T) {
	clock := clocktest.New(time.Unix(1000, 0))
	log, h, buf := newLogged(Config{Burst: 1, Every: time.Hour, Now: clock.Now})
	for range 5 {
		log.Debug("ignored a text message")
	}
	log.Warn("counted")
	if len(lines(buf)) != 1 || h.Suppressed() != 0 {
		t.Fatalf("debug records spent the budget: %q, suppressed %d", buf, h.Suppressed())
	}
}

// Property: over any schedule, no more records pass than the burst plus one per interval
// elapsed, and every record either passes or is counted as suppressed.
func TestNeverOverBudget(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		burst := rapid.IntRange(1, 20).Draw(t, "burst")
		every := time.Duration(rapid.IntRange(1, 1000).Draw(t, "every_ms")) * time.Millisecond
		clock := clocktest.New(time.Unix(1000, 0))
		var passed int
		h := New(countHandler{&passed}, Config{Burst: burst, Every: every, Now: clock.Now})
		var elapsed time.Duration
		steps := rapid.SliceOfN(rapid.IntRange(0, 2000), 1, 200).Draw(t, "gaps_ms")
		for _, gap := range steps {
			d := time.Duration(gap) * time.Millisecond
			clock.Advance(d)
			elapsed += d
			_ = h.Handle(context.Background(), slog.NewRecord(time.Time{}, slog.LevelWarn, "x", 0))
			if bound := burst + int(elapsed/every); passed > bound {
				t.Fatalf("%d records passed, the budget allows %d", passed, bound)
			}
		}
		if uint64(passed)+h.Suppressed() != uint64(len(steps)) {
			t.Fatalf("passed %d + suppressed %d != %d records", passed, h.Suppressed(), len(steps))
		}
	})
}

type countHandler struct{ n *int }

func (c countHandler) Enabled(context.Context, slog.Level) bool  { return true }
func (c countHandler) Handle(context.Context, slog.Record) error { *c.n++; return nil }
func (c countHandler) WithAttrs([]slog.Attr) slog.Handler        { return c }
func (c countHandler) WithGroup(string) slog.Handler             { return c }
