package history

import (
	"sync"

	"github.com/buildfleet/buildfleet/internal/pace/verbs"
)

// Outbox is a node's closed buckets, newest last, at most verbs.MaxHistoryBuckets of them
// (the most a heartbeat carries): an older bucket is dropped to make room. Buckets stay after
// a leader acknowledged them, so a leader elected later can still be handed them: Pending
// gives a scheduler what it has not acknowledged, which for any but the last to acknowledge
// is everything kept.
type Outbox struct {
	mu        sync.Mutex
	buckets   []Bucket
	ackedBy   string // the scheduler (its node id) that acknowledged last
	ackedUpTo uint64 // the newest start it acknowledged
}

// Close records the sample taken at sampleMs as the bucket of the minute that just ended
// before it. A bucket for a minute already recorded, or older than the newest, is ignored (a
// clock stepped back).
func (o *Outbox) Close(sampleMs int64, v Values) {
	start := uint64(BucketStart(sampleMs) - Width)
	o.mu.Lock()
	defer o.mu.Unlock()
	if n := len(o.buckets); n > 0 && o.buckets[n-1].StartMs >= start {
		return
	}
	if len(o.buckets) == verbs.MaxHistoryBuckets {
		o.buckets = append(o.buckets[:0], o.buckets[1:]...)
	}
	o.buckets = append(o.buckets, Bucket{StartMs: start, SampleMs: uint64(sampleMs), Values: v})
}

// Pending is a copy of the buckets scheduler has not acknowledged, oldest first.
func (o *Outbox) Pending(scheduler string) []Bucket {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []Bucket
	for _, b := range o.buckets {
		if scheduler != o.ackedBy || b.StartMs > o.ackedUpTo {
			out = append(out, b)
		}
	}
	return out
}

// Acknowledged records that scheduler took every bucket up to startMs.
func (o *Outbox) Acknowledged(scheduler string, startMs uint64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if scheduler != o.ackedBy {
		o.ackedBy, o.ackedUpTo = scheduler, 0
	}
	o.ackedUpTo = max(o.ackedUpTo, startMs)
}
