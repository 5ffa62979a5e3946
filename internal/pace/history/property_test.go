package history

import (
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// sample is what one machine measured in one minute.
type sample struct{ hits, slots uint64 }

// machineModel is one machine's minutes, drawn as a counter that rises or restarts.
type machineModel map[int64]sample

func drawMachine(t *rapid.T, name string) machineModel {
	minutes := rapid.SliceOfNDistinct(rapid.Int64Range(0, 1399), 1, 300, rapid.ID[int64]).Draw(t, name+" minutes")
	slices.Sort(minutes)
	mm := machineModel{}
	hits := uint64(0)
	for _, m := range minutes {
		if rapid.IntRange(0, 20).Draw(t, "restart") == 0 {
			hits = rapid.Uint64Range(0, 5).Draw(t, "from")
		} else {
			hits += rapid.Uint64Range(0, 50).Draw(t, "rise")
		}
		mm[m] = sample{hits: hits, slots: rapid.Uint64Range(0, 8).Draw(t, "slots")}
	}
	return mm
}

// delta is the model's difference for minute p: both minutes sampled, no restart.
func (mm machineModel) delta(p int64) (uint64, bool) {
	cur, ok1 := mm[p]
	prev, ok2 := mm[p-1]
	if !ok1 || !ok2 || cur.hits < prev.hits {
		return 0, false
	}
	return cur.hits - prev.hits, true
}

// deliver hands mm's minutes to f in a random order, in random batches, some twice.
func deliver(t *rapid.T, f *Fleet, id string, mm machineModel) {
	var all []Bucket
	for m, s := range mm {
		all = append(all, bucket(int(m), map[int]uint64{CacheHits: s.hits, OfferableSlots: s.slots}))
	}
	order := rapid.Permutation(all).Draw(t, id+" order")
	for len(order) > 0 {
		n := rapid.IntRange(1, len(order)).Draw(t, "batch")
		f.Add(id, order[:n])
		if rapid.Bool().Draw(t, "again") {
			f.Add(id, order[:n])
		}
		order = order[n:]
	}
}

// expect is the model's step [from, to) minutes: hits summed over valid differences, slots as
// the sum of each machine's mean; ok false where nothing was measured.
func expect(models []machineModel, from, to int64) (hits, slots float64, hitsOK, slotsOK bool) {
	from, to = max(from, 0), min(to, 1400) // the minutes drawn
	for _, mm := range models {
		var sum, n uint64
		for p := from; p < to; p++ {
			if d, ok := mm.delta(p); ok {
				hits, hitsOK = hits+float64(d), true
			}
			if s, ok := mm[p]; ok {
				sum, n = sum+s.slots, n+1
			}
		}
		if n > 0 {
			slots, slotsOK = slots+float64(sum)/float64(n), true
		}
	}
	return hits, slots, hitsOK, slotsOK
}

func same(p *float64, want float64, ok bool) bool {
	if p == nil || !ok {
		return p == nil && !ok
	}
	return math.Abs(*p-want) <= 1e-9*math.Max(1, want)
}

func show(p *float64) string {
	if p == nil {
		return "null"
	}
	return fmt.Sprint(*p)
}

// TestRingProperties: whatever minutes machines sample, however their counters restart, and in
// whatever order and batches the buckets arrive (some twice), every view equals the model: a
// counter's step is the sum of its valid differences (a restart or a missing minute is a gap),
// a gauge's is the sum of each machine's mean, and a step nobody measured is null, never 0; the
// totals over a view equal the sum of every difference it covers, in every ring.
func TestRingProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var f Fleet
		models := make([]machineModel, rapid.IntRange(1, 3).Draw(t, "machines"))
		newest := int64(0)
		for i := range models {
			models[i] = drawMachine(t, fmt.Sprint("m", i))
			deliver(t, &f, fmt.Sprint("m", i), models[i])
			for m := range models[i] {
				newest = max(newest, m)
			}
		}
		now := at(int(newest)).Add(time.Duration(rapid.Int64Range(0, 3*60_000).Draw(t, "later")) * time.Millisecond)
		var want float64
		for _, mm := range models {
			for p := range int64(1400) {
				d, _ := mm.delta(p)
				want += float64(d)
			}
		}
		for _, name := range Ranges[:6] { // the rest read the day ring: checked below
			checkView(t, &f, models, name, now, want)
		}
		checkView(t, &f, models, "12mo", now, want)
	})
}

func checkView(t *rapid.T, f *Fleet, models []machineModel, name string, now time.Time, wantTotal float64) {
	v, err := f.View(name, now)
	if err != nil {
		t.Fatal(err)
	}
	hitsS, slotsS := v.Series[0], v.Series[7]
	if hitsS.Name != "hits" || slotsS.Name != "offerable_slots" {
		t.Fatalf("series order %s, %s", hitsS.Name, slotsS.Name)
	}
	step := v.StepSeconds * 1000
	var total float64
	for k := range hitsS.Points {
		from := floorDiv(v.StartUnixMs+int64(k)*step-t0.UnixMilli(), Width)
		hits, slots, hitsOK, slotsOK := expect(models, from, from+step/Width)
		if !same(hitsS.Points[k], hits, hitsOK) {
			t.Fatalf("%s step %d (minutes %d..): hits %s; want %v (measured %v)", name, k, from, show(hitsS.Points[k]), hits, hitsOK)
		}
		if !same(slotsS.Points[k], slots, slotsOK) {
			t.Fatalf("%s step %d: slots %s; want %v (measured %v)", name, k, show(slotsS.Points[k]), slots, slotsOK)
		}
		if hitsS.Points[k] != nil {
			total += *hitsS.Points[k]
		}
	}
	if name != "1h" && name != "2h" && name != "8h" && total != wantTotal {
		t.Fatalf("%s: %v hits over the view; the differences sum to %v", name, total, wantTotal)
	}
}

// leaderEvent is one thing the leader saw: a minute it led in, or a decision.
type leaderEvent struct {
	ms      int64
	decided bool
	d       Dispatch
}

// TestLeaderProperties: whatever this node decided while it led, each step's dispatch series
// are the decisions counted in it, live or folded, and a step it never led in is null.
func TestLeaderProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var f Fleet
		led := map[int64]bool{}
		counts := map[int64][dispatchOutcomes]uint64{}
		ms := int64(0)
		for range rapid.IntRange(1, 200).Draw(t, "events") {
			ms += rapid.Int64Range(0, 40*60_000).Draw(t, "gap")
			e := leaderEvent{ms: ms, decided: rapid.Bool().Draw(t, "decided"), d: Dispatch(rapid.IntRange(0, leaderCols-1).Draw(t, "d"))}
			now := t0.Add(time.Duration(e.ms) * time.Millisecond)
			p := floorDiv(e.ms, Width)
			led[p] = true
			if e.decided {
				f.Decided(e.d, now)
				c := counts[p]
				c[e.d]++
				counts[p] = c
			} else {
				f.Leading(now)
			}
		}
		now := t0.Add(time.Duration(ms+rapid.Int64Range(0, 120_000).Draw(t, "later")) * time.Millisecond)
		for _, name := range []string{"1h", "24h", "7d", "1mo", "12mo"} {
			v, err := f.View(name, now)
			if err != nil {
				t.Fatal(err)
			}
			step := v.StepSeconds * 1000
			for k := range v.Series[3].Points {
				from := floorDiv(v.StartUnixMs+int64(k)*step-t0.UnixMilli(), Width)
				var granted, refused float64
				any := false
				for p := from; p < from+step/Width; p++ {
					if !led[p] {
						continue
					}
					any = true
					c := counts[p]
					granted += float64(c[Dispatched])
					for _, d := range fallbacks {
						refused += float64(c[d])
					}
				}
				if !same(v.Series[3].Points[k], granted, any) || !same(v.Series[4].Points[k], refused, any) {
					t.Fatalf("%s step %d: dispatched %s, fallbacks %s; want %v, %v (led %v)", name, k,
						show(v.Series[3].Points[k]), show(v.Series[4].Points[k]), granted, refused, any)
				}
			}
		}
	})
}
