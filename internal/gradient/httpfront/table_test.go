package httpfront

import (
	"testing"
	"time"

	"pgregory.net/rapid"
)

var t0 = time.Unix(1_000_000, 0)

func TestTableAdmit(t *testing.T) {
	type op struct {
		addr string
		at   time.Duration
		want verdict
	}
	tests := []struct {
		name      string
		total     int
		perAddr   int
		prepare   func(tb *table) // open connections before the ops
		ops       []op
		wantEvict int
	}{
		{"under the caps", 4, 2, nil, []op{{"a", 0, admitted}, {"b", 0, admitted}, {"a", 0, admitted}}, 0},
		{"per-address cap, nothing idle", 10, 2, nil, []op{{"a", 0, admitted}, {"a", 0, admitted}, {"a", 0, refusedPerAddr}, {"b", 0, admitted}}, 0},
		{"total cap, nothing idle", 2, 2, nil, []op{{"a", 0, admitted}, {"b", 0, admitted}, {"c", 0, refusedTotal}}, 0},
		{"a head-less connection past the grace makes room", 2, 2, nil,
			[]op{{"a", 0, admitted}, {"b", 0, admitted}, {"c", time.Second, refusedTotal}, {"c", newGrace, admitted}}, 1},
		{"an idle keep-alive makes room at once", 2, 2, func(tb *table) {
			e, _, _ := tb.admit("a", t0)
			tb.set(e, phaseIdle, t0)
			f, _, _ := tb.admit("b", t0)
			tb.set(f, phaseActive, t0)
		}, []op{{"c", 0, admitted}, {"d", 0, refusedTotal}}, 1},
		{"the per-address cap evicts only that address's own", 3, 1, func(tb *table) {
			e, _, _ := tb.admit("b", t0)
			tb.set(e, phaseIdle, t0)
			f, _, _ := tb.admit("a", t0)
			tb.set(f, phaseActive, t0)
		}, []op{{"a", 0, refusedPerAddr}}, 0},
		{"hijacked sessions are never evicted", 1, 1, func(tb *table) {
			e, _, _ := tb.admit("a", t0)
			tb.set(e, phaseHijacked, t0)
			tb.set(e, phaseIdle, t0) // net/http never does this; the table ignores it anyway
		}, []op{{"b", time.Hour, refusedTotal}}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tb := newTable(tc.total, tc.perAddr)
			if tc.prepare != nil {
				tc.prepare(tb)
			}
			evictions := 0
			for i, o := range tc.ops {
				_, ev, v := tb.admit(o.addr, t0.Add(o.at))
				if v != tc.ops[i].want {
					t.Fatalf("op %d (%s at %v): verdict %d, want %d", i, o.addr, o.at, v, o.want)
				}
				if ev != nil {
					evictions++
				}
			}
			if evictions != tc.wantEvict {
				t.Fatalf("%d evictions, want %d", evictions, tc.wantEvict)
			}
		})
	}
}

// Property: whatever connections come, change phase and close, the caps hold, only
// evictable connections are evicted, a refusal happens only when nothing could make room,
// and the per-address counts match the open connections.
func TestTableProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		total := rapid.IntRange(1, 8).Draw(t, "total")
		per := rapid.IntRange(1, 8).Draw(t, "per")
		tb := newTable(total, per)
		var open []*entry
		now := t0
		for range rapid.IntRange(1, 80).Draw(t, "steps") {
			now = now.Add(time.Duration(rapid.IntRange(0, 3000).Draw(t, "ms")) * time.Millisecond)
			switch rapid.IntRange(0, 2).Draw(t, "op") {
			case 0:
				addr := rapid.SampledFrom([]string{"a", "b", "c"}).Draw(t, "addr")
				couldEvict := tb.oldestEvictable(now, "") != nil
				couldEvictAddr := tb.oldestEvictable(now, addr) != nil
				e, ev, v := tb.admit(addr, now)
				if ev != nil && !ev.evictable(now) {
					t.Fatalf("evicted a connection in phase %d", ev.phase)
				}
				if v == refusedTotal && couldEvict || v == refusedPerAddr && couldEvictAddr {
					t.Fatalf("refused (%d) though a connection could make room", v)
				}
				if e != nil {
					open = append(open, e)
				}
			case 1:
				if len(open) > 0 {
					e := open[rapid.IntRange(0, len(open)-1).Draw(t, "which")]
					tb.set(e, phase(rapid.IntRange(1, 3).Draw(t, "phase")), now)
				}
			case 2:
				if len(open) > 0 {
					tb.remove(open[rapid.IntRange(0, len(open)-1).Draw(t, "which")])
				}
			}
			checkTable(t, tb)
		}
	})
}

func checkTable(t *rapid.T, tb *table) {
	if len(tb.open) > tb.maxTotal {
		t.Fatalf("%d open, cap %d", len(tb.open), tb.maxTotal)
	}
	counts := map[string]int{}
	for e := range tb.open {
		counts[e.addr]++
	}
	for addr, n := range counts {
		if n > tb.maxPerAddr || tb.perAddr[addr] != n {
			t.Fatalf("address %s: %d open, counted %d, cap %d", addr, n, tb.perAddr[addr], tb.maxPerAddr)
		}
	}
	if len(counts) != len(tb.perAddr) {
		t.Fatalf("per-address counts %v for open %v", tb.perAddr, counts)
	}
}

func TestDerivedMaxConns(t *testing.T) {
	for _, tc := range []struct {
		files uint64
		want  int
	}{{1024, 768}, {300, 225}, {20, 64}, {1 << 20, 4096}} {
		if got := derivedMaxConns(tc.files); got != tc.want {
			t.Errorf("derivedMaxConns(%d) = %d, want %d", tc.files, got, tc.want)
		}
	}
}
