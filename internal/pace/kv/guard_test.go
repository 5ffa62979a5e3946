package kv

import (
	"net/netip"
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/clocktest"
	"pgregory.net/rapid"
)

var (
	attacker  = netip.MustParseAddr("192.0.2.66")
	bystander = netip.MustParseAddr("192.0.2.7")
)

func never() bool { return false }

// fail runs one failing check for src at the ticket's slot, moving the clock there.
func fail(t *testing.T, g *authGuard, clk *clocktest.Clock, src netip.Addr) {
	t.Helper()
	tk, ok := g.reserve(src, 0)
	if !ok {
		t.Fatal("check refused unchecked")
	}
	clk.Advance(tk.wait)
	if match, run := g.check(tk, never); match || !run {
		t.Fatalf("check: match %v run %v", match, run)
	}
}

func TestAFirstCheckIsFreeAndLaterOnesWaitForTheirSlot(t *testing.T) {
	clk := clocktest.New(time.Unix(1e9, 0))
	g := newAuthGuard(clk.Now)
	if tk, _ := g.reserve(attacker, 0); !tk.free || tk.wait != 0 {
		t.Fatalf("first check: %+v", tk)
	}
	fail(t, g, clk, attacker)
	// Checks reserved at once are spaced one step apart, and the queue has a length limit.
	var last time.Duration
	for i := 1; ; i++ {
		tk, ok := g.reserve(attacker, 0)
		if !ok {
			if last < authQueueMax-authStep {
				t.Fatalf("refused with a queue of only %v", last)
			}
			break
		}
		if tk.wait != time.Duration(i)*authStep {
			t.Fatalf("check %d waits %v, want %v", i, tk.wait, time.Duration(i)*authStep)
		}
		last = tk.wait
	}
	// Another address is not affected.
	if tk, _ := g.reserve(bystander, 0); !tk.free || tk.wait != 0 {
		t.Fatalf("bystander: %+v", tk)
	}
}

func TestStepGrowsWithFailuresAndIsForgotten(t *testing.T) {
	clk := clocktest.New(time.Unix(1e9, 0))
	g := newAuthGuard(clk.Now)
	for range 50 {
		fail(t, g, clk, attacker)
	}
	clk.Advance(time.Minute)
	tk, _ := g.reserve(attacker, 0)
	if tk.wait != 0 {
		t.Fatalf("after a quiet minute: wait %v", tk.wait)
	}
	if next, _ := g.reserve(attacker, 0); next.wait != 50*authStep {
		t.Fatalf("step after 50 failures: %v, want %v", next.wait, 50*authStep)
	}
	if step(1000) != authStepMax {
		t.Fatalf("step is not capped: %v", step(1000))
	}
	clk.Advance(authForget + time.Second)
	if tk, _ := g.reserve(attacker, 0); !tk.free {
		t.Fatal("failures not forgotten after a quiet authForget")
	}
}

func TestFreeTicketsQueueOnceTheirSourceFails(t *testing.T) {
	clk := clocktest.New(time.Unix(1e9, 0))
	g := newAuthGuard(clk.Now)
	a, _ := g.reserve(attacker, 0)
	b, _ := g.reserve(attacker, 0)
	if !a.free || !b.free {
		t.Fatal("both should start free")
	}
	g.check(a, never)
	if _, run := g.check(b, never); run {
		t.Fatal("a free ticket checked after its source failed")
	}
}

func TestConnectionWaitDoubles(t *testing.T) {
	want := []time.Duration{0, 100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond, 800 * time.Millisecond}
	for f, w := range want {
		if got := connWait(f); got != w {
			t.Errorf("connWait(%d) = %v, want %v", f, got, w)
		}
	}
}

func TestSourceTableIsBounded(t *testing.T) {
	clk := clocktest.New(time.Unix(1e9, 0))
	g := newAuthGuard(clk.Now)
	for i := range maxSources + 100 {
		src := netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)})
		tk, _ := g.reserve(src, 0)
		g.check(tk, never)
	}
	if len(g.sources) > maxSources || g.overflow.failures != 100 {
		t.Fatalf("%d sources, overflow %d", len(g.sources), g.overflow.failures)
	}
	// A new source while the table is full shares the overflow record and its queue.
	if tk, _ := g.reserve(netip.MustParseAddr("10.200.0.1"), 0); tk.free {
		t.Fatal("a new source bypassed the full table")
	}
	clk.Advance(authForget + time.Second)
	tk, _ := g.reserve(netip.MustParseAddr("10.200.0.2"), 0)
	g.check(tk, never)
	if len(g.sources) != 1 {
		t.Fatalf("forgotten sources not swept: %d", len(g.sources))
	}
}

// However checks are spread over connections, a source with failures on record is checked at
// most once per authStep.
func TestChecksOfAFailingSourceAreSpaced(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		clk := clocktest.New(time.Unix(1e9, 0))
		g := newAuthGuard(clk.Now)
		var checks []time.Time
		for range rapid.IntRange(1, 60).Draw(rt, "rounds") {
			burst := rapid.IntRange(1, 20).Draw(rt, "burst")
			var tickets []ticket
			for range burst {
				if tk, ok := g.reserve(attacker, rapid.IntRange(0, 4).Draw(rt, "conn failures")); ok {
					tickets = append(tickets, tk)
				}
			}
			base := clk.Now()
			for _, tk := range tickets {
				at := base.Add(tk.wait)
				if d := at.Sub(clk.Now()); d > 0 {
					clk.Advance(d)
				}
				if _, run := g.check(tk, never); run {
					checks = append(checks, clk.Now())
				}
			}
			clk.Advance(time.Duration(rapid.Int64Range(0, int64(time.Second)).Draw(rt, "gap")))
		}
		for i := 2; i < len(checks); i++ { // the first check, on no record, is free
			if gap := checks[i].Sub(checks[i-1]); gap < authStep {
				rt.Fatalf("checks %d and %d only %v apart", i-1, i, gap)
			}
		}
	})
}

func TestLogLimiter(t *testing.T) {
	l := &logLimiter{window: time.Minute, burst: 3}
	now := time.Unix(1e9, 0)
	for i := range 3 {
		if ok, _ := l.allow(now); !ok {
			t.Fatalf("line %d suppressed", i)
		}
	}
	for range 5 {
		if ok, _ := l.allow(now); ok {
			t.Fatal("a line over the burst let through")
		}
	}
	if ok, suppressed := l.allow(now.Add(time.Minute)); !ok || suppressed != 5 {
		t.Fatalf("next window: %v, %d suppressed", ok, suppressed)
	}
}
