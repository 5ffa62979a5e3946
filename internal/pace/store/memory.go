package store

import (
	"container/list"
	"sync"
	"sync/atomic"
)

// memEntryOverhead estimates what one memory entry costs beyond its key and value bytes (map
// slot, entry struct, list element, value slice header); reported as the tier's index bytes.
const memEntryOverhead = 160

// memEntry is one value held in memory. digest is kept so a memory hit can refresh the disk
// tier's LRU position without hashing the key again.
type memEntry struct {
	key    string
	digest digest
	value  []byte
	elem   *list.Element
}

func (e *memEntry) cost() int64 { return int64(len(e.key) + len(e.value)) }

// memTier is the in-memory LRU. Its lock covers map and list operations only; values are
// never copied under it.
type memTier struct {
	mu    sync.Mutex
	limit int64
	used  int64
	items map[string]*memEntry
	order *list.List // front = most recently used

	hits, misses, evictions atomic.Uint64
}

func newMemTier(limit int64) *memTier {
	return &memTier{limit: limit, items: make(map[string]*memEntry), order: list.New()}
}

// get returns the value and the key's digest. The value is shared, not copied.
func (m *memTier) get(key []byte) ([]byte, digest, bool) {
	m.mu.Lock()
	e, ok := m.items[string(key)]
	if ok {
		m.order.MoveToFront(e.elem)
	}
	m.mu.Unlock()
	if !ok {
		m.misses.Add(1)
		return nil, digest{}, false
	}
	m.hits.Add(1)
	return e.value, e.digest, true
}

// put inserts or replaces key, evicting from the LRU tail to fit. A value that cannot fit in
// the whole tier is not kept, and any older value of the key is dropped so the tier never
// serves a stale one.
func (m *memTier) put(key []byte, d digest, value []byte) {
	e := &memEntry{key: string(key), digest: d, value: value}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.removeLocked(e.key)
	if e.cost() > m.limit {
		return
	}
	for m.used+e.cost() > m.limit {
		m.evictLocked()
	}
	e.elem = m.order.PushFront(e)
	m.items[e.key] = e
	m.used += e.cost()
}

func (m *memTier) evictLocked() {
	victim := m.order.Back().Value.(*memEntry)
	m.removeLocked(victim.key)
	m.evictions.Add(1)
}

func (m *memTier) remove(key []byte) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.removeLocked(string(key))
}

func (m *memTier) removeLocked(key string) bool {
	e, ok := m.items[key]
	if !ok {
		return false
	}
	m.order.Remove(e.elem)
	delete(m.items, key)
	m.used -= e.cost()
	return true
}

func (m *memTier) stats() TierStats {
	m.mu.Lock()
	items, used := int64(len(m.items)), m.used
	m.mu.Unlock()
	return TierStats{
		Enabled: true, Items: items, Bytes: used, Limit: m.limit, IndexBytes: items * memEntryOverhead,
		Hits: m.hits.Load(), Misses: m.misses.Load(), Evictions: m.evictions.Load(),
	}
}
