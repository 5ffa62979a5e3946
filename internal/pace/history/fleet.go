package history

import (
	"cmp"
	"slices"
	"sync"
)

// MinutesKept is how many one-minute buckets the leader keeps per machine: a day.
const MinutesKept = 1440

// Fleet is the leader's record of every machine's buckets, a day of minutes each, ordered by
// start. Buckets arrive already de-duplicated by the scheduler's per-machine high-water mark,
// but a bucket for a minute it holds replaces the old one, so a redelivery is never counted
// twice either way.
type Fleet struct {
	mu       sync.Mutex
	machines map[string][]Bucket
}

// Add records buckets delivered by nodeID.
func (f *Fleet) Add(nodeID string, buckets []Bucket) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.machines == nil {
		f.machines = map[string][]Bucket{}
	}
	kept := f.machines[nodeID]
	for _, b := range buckets {
		i, found := slices.BinarySearchFunc(kept, b.StartMs, func(k Bucket, start uint64) int {
			return cmp.Compare(k.StartMs, start)
		})
		if found {
			kept[i] = b
			continue
		}
		kept = slices.Insert(kept, i, b)
	}
	if extra := len(kept) - MinutesKept; extra > 0 {
		kept = slices.Delete(kept, 0, extra)
	}
	f.machines[nodeID] = kept
}

// Machine is a copy of nodeID's buckets, oldest first.
func (f *Fleet) Machine(nodeID string) []Bucket {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.machines[nodeID])
}

// Machines lists the machines with buckets, sorted.
func (f *Fleet) Machines() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	ids := make([]string, 0, len(f.machines))
	for id := range f.machines {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}
