package history

import (
	"fmt"
	"runtime"
	"testing"
)

// benchFleet is machines machines with days days of minutes each.
func benchFleet(machines, days int) *Fleet {
	f := new(Fleet)
	for i := range machines {
		id := fmt.Sprint("machine-", i)
		for m := range days * 1440 {
			f.Add(id, []Bucket{bucket(m, map[int]uint64{CacheHits: uint64(m * 3), CompilesDone: uint64(m), OfferableSlots: 8,
				CPUBusyTicks: uint64(m * 50), CPUTotalTicks: uint64(m * 100)})})
		}
	}
	for m := range days * 1440 {
		f.Decided(Dispatched, at(m))
	}
	return f
}

func BenchmarkView(b *testing.B) {
	f := benchFleet(64, 2)
	for _, name := range Ranges {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if _, err := f.View(name, at(2*1440)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkMarshalBinary(b *testing.B) {
	f := benchFleet(64, 2)
	data, _ := f.MarshalBinary()
	b.ReportMetric(float64(len(data))/64, "file-bytes/machine")
	for b.Loop() {
		f.MarshalBinary()
	}
}

func BenchmarkAdd(b *testing.B) {
	f := new(Fleet)
	m := 0
	for b.Loop() {
		f.Add("a", []Bucket{bucket(m, map[int]uint64{CacheHits: uint64(m), OfferableSlots: 1})})
		m++
	}
}

// TestAMachinesRingsTakeWhatTheBoundSays: the memory MaxMachines is documented against.
func TestAMachinesRingsTakeWhatTheBoundSays(t *testing.T) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	m := newMachine()
	runtime.ReadMemStats(&after)
	got := after.TotalAlloc - before.TotalAlloc
	if got < 540<<10 || got > 600<<10 {
		t.Fatalf("a machine's rings take %d KiB; the bound is documented as about 560 KiB each", got>>10)
	}
	runtime.KeepAlive(m)
}
