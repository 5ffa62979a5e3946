package lease

import (
	"container/heap"
	"errors"
	"math"
	"sync"
	"time"
)

// DefaultSpentCapacity bounds a spent set (pace-node §13.13).
const DefaultSpentCapacity = 65536

// Spent-set refusals.
var (
	// ErrAlreadySpent: the id was spent before and has not aged out.
	ErrAlreadySpent = errors.New("already spent")
	// ErrSpentSetFull: every slot holds an id still inside its window.
	ErrSpentSetFull = errors.New("spent set full")
)

// SpentSet remembers single-use ids (lease grants, machine tickets) until
// the moment after which their token would be refused as expired anyway.
// It is bounded: when full of live entries it refuses rather than forget
// one, since forgetting an entry early would let that token be replayed.
// Safe for concurrent use; the caller passes the time.
type SpentSet struct {
	mu       sync.Mutex
	capacity int
	byID     map[[32]byte]struct{}
	queue    expiryQueue
}

// NewSpentSet returns an empty set holding at most capacity ids; a
// capacity below 1 means DefaultSpentCapacity.
func NewSpentSet(capacity int) *SpentSet {
	if capacity < 1 {
		capacity = DefaultSpentCapacity
	}
	return &SpentSet{capacity: capacity, byID: make(map[[32]byte]struct{})}
}

// Spend records id as spent until keepUntil (inclusive). It prunes entries
// whose keepUntil is before now first, then refuses an id already present
// (ErrAlreadySpent) and, only then, a full set (ErrSpentSetFull).
func (s *SpentSet) Spend(id [32]byte, keepUntil, now time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.prune(clampedUnixNano(now))
	if _, spent := s.byID[id]; spent {
		return ErrAlreadySpent
	}
	if len(s.byID) >= s.capacity {
		return ErrSpentSetFull
	}
	s.byID[id] = struct{}{}
	heap.Push(&s.queue, spentEntry{id: id, keepUntil: clampedUnixNano(keepUntil)})
	return nil
}

// Len is the number of ids held (including any not yet pruned).
func (s *SpentSet) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.byID)
}

// Capacity is the bound given at construction.
func (s *SpentSet) Capacity() int { return s.capacity }

func (s *SpentSet) prune(now int64) {
	for len(s.queue) > 0 && s.queue[0].keepUntil < now {
		e := heap.Pop(&s.queue).(spentEntry)
		delete(s.byID, e.id)
	}
}

type spentEntry struct {
	id        [32]byte
	keepUntil int64 // unix nanoseconds
}

// expiryQueue is a min-heap on keepUntil.
type expiryQueue []spentEntry

func (q expiryQueue) Len() int           { return len(q) }
func (q expiryQueue) Less(i, j int) bool { return q[i].keepUntil < q[j].keepUntil }
func (q expiryQueue) Swap(i, j int)      { q[i], q[j] = q[j], q[i] }
func (q *expiryQueue) Push(x any)        { *q = append(*q, x.(spentEntry)) }
func (q *expiryQueue) Pop() any {
	old := *q
	e := old[len(old)-1]
	*q = old[:len(old)-1]
	return e
}

// latestNano is the last instant UnixNano can represent.
var latestNano = time.Unix(0, math.MaxInt64)

// clampedUnixNano is t.UnixNano without its overflow past year 2262: a
// later time stays the latest instant rather than wrapping into the past.
func clampedUnixNano(t time.Time) int64 {
	if t.After(latestNano) {
		return math.MaxInt64
	}
	if t.Before(time.Unix(0, 0)) {
		return 0
	}
	return t.UnixNano()
}
