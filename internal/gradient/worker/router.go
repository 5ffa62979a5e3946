package worker

import (
	"sync"

	"github.com/buildfleet/buildfleet/internal/gradient/wire"
)

// router hands replies read by the session goroutine to the job goroutines waiting for them:
// CacheStatus, CacheError and KnownDerivations by query_id, UploadGrant and UploadCommitted
// by request_id, and the NAR stream messages by (job_id, store_path). A reply nobody waits
// for (late, or for an abandoned request) is dropped.
type router struct {
	mu      sync.Mutex
	queries map[string]chan wire.ServerMessage
	uploads map[uint64]chan wire.ServerMessage
	nars    map[narKey]*narStream
}

type narKey struct{ job, path string }

func newRouter() *router {
	return &router{
		queries: map[string]chan wire.ServerMessage{},
		uploads: map[uint64]chan wire.ServerMessage{},
		nars:    map[narKey]*narStream{},
	}
}

// awaitQuery registers a query before it is sent; done unregisters it.
func (r *router) awaitQuery(id string) (replies <-chan wire.ServerMessage, done func()) {
	ch := make(chan wire.ServerMessage, 1)
	r.mu.Lock()
	r.queries[id] = ch
	r.mu.Unlock()
	return ch, func() {
		r.mu.Lock()
		delete(r.queries, id)
		r.mu.Unlock()
	}
}

func (r *router) deliverQuery(id string, m wire.ServerMessage) {
	r.mu.Lock()
	ch := r.queries[id]
	delete(r.queries, id) // one answer per query id
	r.mu.Unlock()
	if ch != nil {
		ch <- m
	}
}

// awaitUpload registers an upload request; its grant and commit arrive on the channel.
func (r *router) awaitUpload(id uint64) (replies <-chan wire.ServerMessage, done func()) {
	ch := make(chan wire.ServerMessage, 4)
	r.mu.Lock()
	r.uploads[id] = ch
	r.mu.Unlock()
	return ch, func() {
		r.mu.Lock()
		delete(r.uploads, id)
		r.mu.Unlock()
	}
}

func (r *router) deliverUpload(id uint64, m wire.ServerMessage) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if ch := r.uploads[id]; ch != nil {
		select {
		case ch <- m:
		default: // a server sending more than a grant and a commit: drop the excess
		}
	}
}

func (r *router) addNar(k narKey, st *narStream) {
	r.mu.Lock()
	r.nars[k] = st
	r.mu.Unlock()
}

func (r *router) removeNar(k narKey) {
	r.mu.Lock()
	delete(r.nars, k)
	r.mu.Unlock()
}

// deliverNar applies a NAR stream message to its stream; the write to the stream's file
// happens here, on the session goroutine, so the frame can be released right after.
func (r *router) deliverNar(m wire.ServerMessage) {
	var k narKey
	switch m := m.(type) {
	case *wire.NarStreamHeader:
		k = narKey{m.JobID, m.StorePath}
	case *wire.NarPush:
		k = narKey{m.JobID, m.StorePath}
	case *wire.NarUnavailable:
		k = narKey{m.JobID, m.StorePath}
	case *wire.NarAbort:
		k = narKey{m.JobID, m.StorePath}
	}
	r.mu.Lock()
	st := r.nars[k]
	r.mu.Unlock()
	if st != nil {
		st.apply(m)
	}
}
