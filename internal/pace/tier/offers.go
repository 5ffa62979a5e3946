package tier

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
)

// offer is one STORE waiting to be offered upstream. Its slices are the request's kept
// buffers (or the canonical encoding) and are only read.
type offer struct {
	key, group, value []byte
}

// offers hands stores to the upstream from a bounded queue drained by a few workers, so a
// local STORE is answered without waiting on the network. The queue is bounded in entries and
// in bytes; an offer that does not fit is dropped and reported, never waited for.
type offers struct {
	up       upstream
	queue    chan offer
	maxBytes int64
	queued   atomic.Int64 // bytes of values waiting in the queue
	done     func(err error)

	ctx    context.Context // cancelled when close gives up waiting
	cancel context.CancelFunc
	mu     sync.RWMutex // held shared by enqueue, exclusively by close
	closed bool
	wg     sync.WaitGroup
}

// newOffers starts workers; done is called once per offer with its outcome (nil: stored),
// including offers dropped because the queue was full or closed.
func newOffers(up upstream, workers, entries int, maxBytes int64, done func(error)) *offers {
	ctx, cancel := context.WithCancel(context.Background())
	o := &offers{up: up, queue: make(chan offer, entries), maxBytes: maxBytes, done: done, ctx: ctx, cancel: cancel}
	for range workers {
		o.wg.Go(o.work)
	}
	return o
}

// enqueue queues a store; it reports false when the store was dropped instead (queue full, or
// the tier closing). A value larger than the byte bound is still taken when the queue holds no
// bytes, so one large object is never refused by a bound meant for many.
func (o *offers) enqueue(of offer) bool {
	o.mu.RLock()
	defer o.mu.RUnlock()
	if o.closed {
		return false
	}
	n := int64(len(of.value))
	if held := o.queued.Add(n); held > o.maxBytes && held != n {
		o.queued.Add(-n)
		return false
	}
	select {
	case o.queue <- of:
		return true
	default:
		o.queued.Add(-n)
		return false
	}
}

func (o *offers) work() {
	for of := range o.queue {
		o.queued.Add(-int64(len(of.value)))
		o.done(o.up.Store(o.ctx, of.key, of.group, of.value))
	}
}

// close stops taking offers and lets the workers drain the queue until ctx ends; then it
// cancels what remains and waits for the workers, which abort fast once the upstream is closed
// by the caller.
func (o *offers) close(ctx context.Context) error {
	o.mu.Lock()
	if !o.closed {
		o.closed = true
		close(o.queue)
	}
	o.mu.Unlock()
	drained := make(chan struct{})
	go func() { o.wg.Wait(); close(drained) }()
	select {
	case <-drained:
		o.cancel()
		return nil
	case <-ctx.Done():
		o.cancel()
		return ctx.Err()
	}
}

// wait blocks until every worker has returned.
func (o *offers) wait() { o.wg.Wait() }

// errOfferDropped reports a store not offered upstream because the queue was full (or the
// tier closing): a slow upstream must not slow local STOREs, so the offer is dropped.
var errOfferDropped = errors.New("upstream store queue full; offer dropped")
