package history

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// t0 is a day boundary (UTC), so every ring's periods start at it.
var t0 = time.UnixMilli(20_833 * dayMs)

// at is minute m after t0.
func at(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }

// bucket is minute m's bucket with the given series set.
func bucket(m int, set map[int]uint64) Bucket {
	b := Bucket{StartMs: uint64(at(m).UnixMilli()), SampleMs: uint64(at(m + 1).Add(time.Second).UnixMilli())}
	for k, v := range set {
		b.Values[k] = v
	}
	return b
}

// points renders a series' points, "-" for null.
func points(t *testing.T, v View, name string) []string {
	t.Helper()
	for _, s := range v.Series {
		if s.Name == name {
			out := make([]string, len(s.Points))
			for i, p := range s.Points {
				out[i] = "-"
				if p != nil {
					out[i] = fmt.Sprintf("%g", *p)
				}
			}
			return out
		}
	}
	t.Fatalf("no series %q in %s", name, v.Range)
	return nil
}

func mustView(t *testing.T, f *Fleet, rangeName string, now time.Time) View {
	t.Helper()
	v, err := f.View(rangeName, now)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func lastN(p []string, n int) []string { return p[len(p)-n:] }

func TestCountersAreDifferencesAndARestartOrAMissingMinuteIsAGap(t *testing.T) {
	var f Fleet
	hits := []int64{10, 15, 15, 3, 7, -1, 20} // 3: the node restarted; -1: no bucket that minute
	for m, h := range hits {
		if h >= 0 {
			f.Add("a", []Bucket{bucket(m, map[int]uint64{CacheHits: uint64(h), OfferableSlots: uint64(m)})})
		}
	}
	v := mustView(t, &f, "1h", at(6).Add(30*time.Second))
	if v.StepSeconds != 60 || v.StartUnixMs != at(6-59).UnixMilli() || len(v.Series[0].Points) != 60 {
		t.Fatalf("1h view: step %d s from %d, %d points", v.StepSeconds, v.StartUnixMs, len(v.Series[0].Points))
	}
	want := []string{"-", "5", "0", "-", "4", "-", "-"}
	if got := lastN(points(t, v, "hits"), 7); !slices.Equal(got, want) {
		t.Errorf("hits %v; want %v (no minute before the first, a restart, a missing minute and the one after it are gaps)", got, want)
	}
	if got := lastN(points(t, v, "offerable_slots"), 7); !slices.Equal(got, []string{"0", "1", "2", "3", "4", "-", "6"}) {
		t.Errorf("offerable slots %v: a gauge is its sample, null where none came", got)
	}
	if got := points(t, v, "misses"); slices.ContainsFunc(got[:53], func(s string) bool { return s != "-" }) {
		t.Errorf("misses before anything arrived: %v", got[:53])
	}
}

func TestAStepSumsMachinesAndAveragesAGaugeOverItsMinutes(t *testing.T) {
	var f Fleet
	for m := range 5 {
		f.Add("a", []Bucket{bucket(m, map[int]uint64{OfferableSlots: 4, CompilesDone: uint64(10 * m)})})
	}
	f.Add("b", []Bucket{bucket(0, map[int]uint64{OfferableSlots: 2}), bucket(1, map[int]uint64{OfferableSlots: 2, CompilesDone: 3}),
		bucket(2, map[int]uint64{OfferableSlots: 1, CompilesDone: 3})})
	v := mustView(t, &f, "24h", at(7))
	if v.StepSeconds != 300 || len(v.Series[0].Points) != 288 || v.StartUnixMs != at(5-287*5).UnixMilli() {
		t.Fatalf("24h view: step %d s from %d, %d points", v.StepSeconds, v.StartUnixMs, len(v.Series[0].Points))
	}
	if got := lastN(points(t, v, "offerable_slots"), 2); !slices.Equal(got, []string{fmt.Sprintf("%g", 4+5.0/3), "-"}) {
		t.Errorf("offerable slots %v: a's mean 4 plus b's 5/3, then a step nobody sampled yet", got)
	}
	if got := lastN(points(t, v, "compiles"), 2); !slices.Equal(got, []string{"43", "-"}) {
		t.Errorf("compiles %v; want a's 40 and b's 3", got)
	}
}

func TestCPUBusyIsTheFleetsBusyTicksOverItsTicks(t *testing.T) {
	cpu := func(m int, busy, all uint64) Bucket {
		return bucket(m, map[int]uint64{CPUBusyTicks: busy, CPUTotalTicks: all})
	}
	var f Fleet
	f.Add("unreadable", []Bucket{cpu(0, 0, 0), cpu(1, 0, 0)})
	v := mustView(t, &f, "1h", at(1))
	if got := lastN(points(t, v, "cpu_busy_percent"), 1); got[0] != "-" {
		t.Fatalf("a machine without /proc/stat: %v; want null", got)
	}
	f.Add("a", []Bucket{cpu(0, 100, 1000), cpu(1, 150, 1100)})
	f.Add("b", []Bucket{cpu(0, 7, 500), cpu(1, 7, 600)})
	v = mustView(t, &f, "1h", at(1))
	if got := lastN(points(t, v, "cpu_busy_percent"), 2); !slices.Equal(got, []string{"-", "25"}) {
		t.Errorf("cpu %v; want 50 busy of 200 ticks", got)
	}
}

func TestAnOlderNodesBucketLeavesItsMissingSeriesNull(t *testing.T) {
	var f Fleet
	for m := range 2 {
		b := bucket(m, map[int]uint64{CacheHits: uint64(m), CPUBusyTicks: 9, CPUTotalTicks: 9})
		b.Absent = 3 // packed ten series: the CPU ticks and slot refusals are not its
		f.Add("old", []Bucket{b})
	}
	v := mustView(t, &f, "1h", at(1))
	for name, want := range map[string]string{"hits": "1", "cpu_busy_percent": "-", "queued": "-"} {
		if got := lastN(points(t, v, name), 1)[0]; got != want {
			t.Errorf("%s = %s; want %s", name, got, want)
		}
	}
}

func TestARedeliveredMinuteIsKeptOnceAndABackfilledOneFillsBothDifferences(t *testing.T) {
	var f Fleet
	hits := func(m int, h uint64) Bucket { return bucket(m, map[int]uint64{CacheHits: h}) }
	f.Add("a", []Bucket{hits(0, 0), hits(2, 10)})
	f.Add("a", []Bucket{hits(1, 4)})
	f.Add("a", []Bucket{hits(1, 100), hits(2, 50)}) // redelivered: ignored
	if got := lastN(points(t, mustView(t, &f, "1h", at(2)), "hits"), 3); !slices.Equal(got, []string{"-", "4", "6"}) {
		t.Errorf("minutes %v; want 4 then 6", got)
	}
	if got := lastN(points(t, mustView(t, &f, "7d", at(2)), "hits"), 1); got[0] != "10" {
		t.Errorf("the hour %v; want both differences folded once: 10", got)
	}
	if got := lastN(points(t, mustView(t, &f, "12mo", at(2)), "hits"), 1); got[0] != "10" {
		t.Errorf("the day %v; want 10", got)
	}
}

func TestDispatchOutcomesAreNullBeforeTheLeaderLedAndCountLive(t *testing.T) {
	var f Fleet
	if got := points(t, mustView(t, &f, "1h", at(10)), "dispatched"); slices.ContainsFunc(got, func(s string) bool { return s != "-" }) {
		t.Fatalf("a node that never led: %v", got)
	}
	f.Leading(at(10).Add(5 * time.Second))
	v := mustView(t, &f, "1h", at(10).Add(6*time.Second))
	if got := lastN(points(t, v, "dispatched"), 2); !slices.Equal(got, []string{"-", "0"}) {
		t.Fatalf("dispatched %v; want null before the term and 0 in the minute it leads", got)
	}
	for _, d := range []Dispatch{Dispatched, Dispatched, FallbackNoCapacity, FallbackNoWorker} {
		f.Decided(d, at(10).Add(20*time.Second))
	}
	v = mustView(t, &f, "1h", at(10).Add(21*time.Second))
	for name, want := range map[string]string{"dispatched": "2", "local_fallbacks": "2", "fallback_no_capacity": "1", "fallback_withdrawn": "0"} {
		if got := lastN(points(t, v, name), 1)[0]; got != want {
			t.Errorf("%s = %s in the open minute; want %s", name, got, want)
		}
	}
	if got := lastN(points(t, mustView(t, &f, "7d", at(10)), "dispatched"), 1)[0]; got != "2" {
		t.Errorf("the hour holding the open minute: %s; want 2, counted live", got)
	}
	f.Leading(at(11))            // closes minute 10 into the hour
	f.Decided(Dispatched, at(9)) // a clock stepped back: counted in the open minute
	if got := lastN(points(t, mustView(t, &f, "7d", at(11)), "dispatched"), 1)[0]; got != "3" {
		t.Errorf("the hour after minute 10 closed: %s; want 2 folded plus 1 open", got)
	}
	if got := lastN(points(t, mustView(t, &f, "1h", at(11)), "dispatched"), 3); !slices.Equal(got, []string{"-", "2", "1"}) {
		t.Errorf("minutes %v", got)
	}
}

func TestUnknownRangesAndMachinesAreRefused(t *testing.T) {
	var f Fleet
	_, err := f.View("3h", t0)
	if !errors.Is(err, ErrUnknownRange) || !strings.Contains(err.Error(), strings.Join(Ranges, ", ")) {
		t.Errorf("unknown range: %v; want ErrUnknownRange naming %v", err, Ranges)
	}
	if _, err := f.MachineView("nobody", "1h", t0); !errors.Is(err, ErrUnknownMachine) {
		t.Errorf("unknown machine: %v", err)
	}
	if _, err := f.MachineView("nobody", "1d", t0); !errors.Is(err, ErrUnknownRange) {
		t.Errorf("unknown range for a machine: %v", err)
	}
}

// TestEveryRangeFitsItsRing: each range's span, and the minute before it a counter's first
// difference needs, lies within the ring it reads.
func TestEveryRangeFitsItsRing(t *testing.T) {
	size := map[int64]int64{Width: MinutesKept, hourMs: HoursKept, dayMs: DaysKept}
	for i, r := range rangeSpecs {
		if r.name != Ranges[i] {
			t.Errorf("range %d is %s; Ranges says %s", i, r.name, Ranges[i])
		}
		if span := int64(r.points) * r.step / r.ring; span > size[r.ring] || r.step%r.ring != 0 {
			t.Errorf("%s: %d periods of %d ms; the ring keeps %d", r.name, span, r.ring, size[r.ring])
		}
	}
	var f Fleet
	f.Add("a", []Bucket{bucket(0, nil)})
	want := map[string][2]int64{"1h": {60, 60}, "2h": {120, 60}, "8h": {96, 300}, "24h": {288, 300},
		"7d": {168, 3600}, "1mo": {120, 6 * 3600}, "6mo": {183, 86400}, "12mo": {365, 86400}}
	for _, name := range Ranges {
		v, err := f.MachineView("a", name, at(0))
		if err != nil || int64(len(v.Series[0].Points)) != want[name][0] || v.StepSeconds != want[name][1] {
			t.Errorf("%s: %d points of %d s (%v); want %v", name, len(v.Series[0].Points), v.StepSeconds, err, want[name])
		}
	}
}

func TestTheFleetKeepsAtMostMaxMachinesForgettingTheQuietest(t *testing.T) {
	var f Fleet
	for i := range MaxMachines {
		f.Add(fmt.Sprint("m", i), []Bucket{bucket(1000+i, nil)})
	}
	f.Add("m0", []Bucket{bucket(5000, nil)}) // m0 spoke last; m1 is now the quietest
	f.Add("new", []Bucket{bucket(5001, nil)})
	ids := f.Machines()
	if len(ids) != MaxMachines || !slices.Contains(ids, "m0") || slices.Contains(ids, "m1") || !slices.Contains(ids, "new") {
		t.Fatalf("%d machines kept, m0 %v, m1 %v, new %v", len(ids), slices.Contains(ids, "m0"), slices.Contains(ids, "m1"), slices.Contains(ids, "new"))
	}
}

// TestALeaseIsCountedWhileAViewHoldsTheMachines: the leader's counts have a lock of their own,
// so a LEASE decided while a view reads the machines' rings does not wait for it.
func TestALeaseIsCountedWhileAViewHoldsTheMachines(t *testing.T) {
	var f Fleet
	f.mu.Lock() // as a view drawing the machines does
	defer f.mu.Unlock()
	done := make(chan struct{})
	go func() { f.Decided(Dispatched, at(0)); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("counting a LEASE waited on the machines' lock")
	}
}
