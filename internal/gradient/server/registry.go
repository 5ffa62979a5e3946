package server

import (
	"sort"
	"sync"
)

// registry holds the live sessions, one per worker ID (gradient-protocol §4.1: a second
// session for the same ID is refused 496). A slot is claimed during the handshake, before
// InitAck, and the session is attached once it runs.
type registry struct {
	mu   sync.Mutex
	live map[string]*worker // nil while the claiming handshake finishes
}

func newRegistry() *registry { return &registry{live: map[string]*worker{}} }

// claim takes id's slot; false when another session holds it.
func (r *registry) claim(id string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, held := r.live[id]; held {
		return false
	}
	r.live[id] = nil
	return true
}

// attach fills a claimed slot with its running session.
func (r *registry) attach(w *worker) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.live[w.id] = w
}

// release frees id's slot if it still belongs to w (nil: the handshake that claimed it).
func (r *registry) release(id string, w *worker) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if cur, held := r.live[id]; held && cur == w {
		delete(r.live, id)
	}
}

// get is the running session of id, or nil.
func (r *registry) get(id string) *worker {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.live[id]
}

// all lists the running sessions, by worker ID.
func (r *registry) all() []*worker {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]*worker, 0, len(r.live))
	for _, w := range r.live {
		if w != nil {
			out = append(out, w)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}
