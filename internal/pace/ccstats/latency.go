package ccstats

import "math"

// Bucket layout of a Latency: bucket 0 holds 0 µs, bucket i ≥ 1 holds [2^((i-1)/16),
// 2^(i/16)) µs. Sixteen buckets per doubling make a bucket 4.4% wide, so a percentile read
// from its middle is within 2.2% of the nearest-rank value; 40 doublings reach 12 days.
const (
	subBuckets = 16
	octaves    = 40
	numBuckets = 1 + subBuckets*octaves
	// maxMicros is the largest value a Latency holds; larger ones (a corrupt line) count as it.
	maxMicros = uint64(1) << octaves
)

// Latency summarises one latency over any number of invocations in fixed memory: exact count,
// mean, min and max, and a log-scale histogram for percentiles. The log is append-only and may
// hold millions of lines, so samples are never kept. Values are whole microseconds, the
// resolution pace-cc records, which keeps the sum exact and the fold independent of order.
type Latency struct {
	Count   uint64
	sum     uint64 // µs, saturating
	min     uint64 // µs, valid when Count > 0
	max     uint64 // µs
	buckets [numBuckets]uint64
}

// Add counts one value in milliseconds. Negative and non-finite values are ignored.
func (l *Latency) Add(ms float64) {
	if !(ms >= 0) || math.IsInf(ms, 1) {
		return
	}
	us := maxMicros
	if x := math.Round(ms * 1000); x < float64(maxMicros) {
		us = uint64(x)
	}
	if l.Count == 0 || us < l.min {
		l.min = us
	}
	l.max = max(l.max, us)
	l.Count++
	if l.sum += us; l.sum < us {
		l.sum = math.MaxUint64
	}
	l.buckets[bucketOf(us)]++
}

func bucketOf(us uint64) int {
	if us == 0 {
		return 0
	}
	return min(1+int(math.Log2(float64(us))*subBuckets), numBuckets-1)
}

// bucketMiddle is the geometric middle of bucket i in µs.
func bucketMiddle(i int) float64 {
	if i == 0 {
		return 0
	}
	return math.Exp2((float64(i-1) + 0.5) / subBuckets)
}

// Mean is the exact mean in milliseconds, 0 for none.
func (l *Latency) Mean() float64 {
	if l.Count == 0 {
		return 0
	}
	return float64(l.sum) / float64(l.Count) / 1000
}

// Min is the smallest value in milliseconds, 0 for none.
func (l *Latency) Min() float64 { return float64(l.min) / 1000 }

// Max is the largest value in milliseconds, 0 for none.
func (l *Latency) Max() float64 { return float64(l.max) / 1000 }

// Percentile is the p-th percentile (0..100) by nearest rank, in milliseconds: the middle of
// the bucket that holds that rank, kept within [Min, Max]. The first and last ranks are exact.
func (l *Latency) Percentile(p float64) float64 {
	if l.Count == 0 {
		return 0
	}
	rank := uint64(math.Ceil(p / 100 * float64(l.Count)))
	switch {
	case rank <= 1:
		return l.Min()
	case rank >= l.Count:
		return l.Max()
	}
	var seen uint64
	for i, n := range l.buckets {
		if seen += n; seen >= rank {
			mid := min(max(bucketMiddle(i), float64(l.min)), float64(l.max))
			return mid / 1000
		}
	}
	return l.Max() // unreachable: the buckets hold Count values
}
