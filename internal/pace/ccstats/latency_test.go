package ccstats

import (
	"math"
	"sort"
	"testing"

	"pgregory.net/rapid"
)

// relTol is the bound a percentile read from a bucket's middle keeps: half a bucket's width.
var relTol = math.Exp2(1.0/(2*subBuckets)) - 1

func latencyOf(ms ...float64) *Latency {
	var l Latency
	for _, x := range ms {
		l.Add(x)
	}
	return &l
}

func seq(from, to float64) []float64 {
	var xs []float64
	for x := from; x <= to; x++ {
		xs = append(xs, x)
	}
	return xs
}

func TestLatencyFigures(t *testing.T) {
	for _, tc := range []struct {
		name                      string
		in                        []float64
		count                     uint64
		mean, p50, p95, max, min_ float64
	}{
		{"none", nil, 0, 0, 0, 0, 0, 0},
		{"one", []float64{5}, 1, 5, 5, 5, 5, 5},
		{"all equal", []float64{2.5, 2.5, 2.5, 2.5}, 4, 2.5, 2.5, 2.5, 2.5, 2.5},
		{"1 to 100", seq(1, 100), 100, 50.5, 50, 95, 100, 1},
		{"zeros count", []float64{0, 0, 0, 10}, 4, 2.5, 0, 10, 10, 0},
		{"two", []float64{1, 1000}, 2, 500.5, 1, 1000, 1000, 1},
		{"invalid ignored", []float64{3, -1, math.NaN(), math.Inf(1), math.Inf(-1)}, 1, 3, 3, 3, 3, 3},
		{"microseconds", []float64{0.0004, 0.0006, 0.0015}, 3, 0.001, 0.001, 0.002, 0.002, 0},
		{"corrupt huge value", []float64{1e300}, 1, float64(maxMicros) / 1000, float64(maxMicros) / 1000,
			float64(maxMicros) / 1000, float64(maxMicros) / 1000, float64(maxMicros) / 1000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := latencyOf(tc.in...)
			if l.Count != tc.count {
				t.Fatalf("count %d, want %d", l.Count, tc.count)
			}
			near := func(what string, got, want float64) {
				if math.Abs(got-want) > relTol*want+1e-9 {
					t.Errorf("%s = %v, want %v (within %.1f%%)", what, got, want, 100*relTol)
				}
			}
			near("mean", l.Mean(), tc.mean)
			near("p50", l.Percentile(50), tc.p50)
			near("p95", l.Percentile(95), tc.p95)
			if l.Max() != tc.max || l.Min() != tc.min_ || l.Percentile(100) != tc.max || l.Percentile(0) != tc.min_ {
				t.Errorf("min %v max %v p0 %v p100 %v, want %v and %v", l.Min(), l.Max(), l.Percentile(0), l.Percentile(100), tc.min_, tc.max)
			}
		})
	}
}

// TestLatencyMeanIsExact: the mean is kept as a sum of whole microseconds, not estimated.
func TestLatencyMeanIsExact(t *testing.T) {
	l := latencyOf(seq(1, 100)...)
	if l.Mean() != 50.5 {
		t.Fatalf("mean %v", l.Mean())
	}
}

// TestPercentileWithinHalfABucketProperty: against the exact nearest-rank percentile of the
// recorded microseconds, the histogram's answer is within half a bucket, for any samples.
func TestPercentileWithinHalfABucketProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		xs := rapid.SliceOfN(rapid.Float64Range(0, 600_000), 1, 300).Draw(t, "ms")
		p := rapid.Float64Range(0, 100).Draw(t, "p")
		l := latencyOf(xs...)
		us := make([]float64, len(xs))
		var sum float64
		for i, x := range xs {
			us[i] = math.Round(x * 1000)
			sum += us[i]
		}
		sort.Float64s(us)
		rank := max(1, min(int(math.Ceil(p/100*float64(len(us)))), len(us)))
		want := us[rank-1] / 1000
		if got := l.Percentile(p); math.Abs(got-want) > relTol*want+1e-9 {
			t.Fatalf("p%v = %v, exact %v", p, got, want)
		}
		if l.Count != uint64(len(xs)) || l.Max() != us[len(us)-1]/1000 || l.Min() != us[0]/1000 {
			t.Fatalf("count %d max %v min %v", l.Count, l.Max(), l.Min())
		}
		if want := sum / float64(len(us)) / 1000; math.Abs(l.Mean()-want) > 1e-9*want {
			t.Fatalf("mean %v, want %v", l.Mean(), want)
		}
	})
}
