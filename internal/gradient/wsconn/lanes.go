package wsconn

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/wire"
)

// lanes are the two send queues and the single goroutine that writes them
// (gradient-protocol §1.5).
type lanes struct {
	control, bulk chan *outbound
	stallTimeout  time.Duration
	write         func([]*outbound) error

	// held is a bulk frame the writer took while a control frame was also ready; it leads
	// the next bulk batch. Touched only by the writer goroutine.
	held *outbound

	// sendMu fences shutdown: Sends hold it shared while they queue, so once shutdown has
	// taken it exclusively after closing is closed, no frame can be queued behind the drain.
	sendMu   sync.RWMutex
	closing  <-chan struct{}
	drainCh  chan struct{} // closed: write what is queued, then exit
	stopCh   chan struct{} // closed: exit now, dropping what is queued
	drainOne sync.Once
	stopOne  sync.Once
	started  chan struct{} // closed when the writer goroutine is launched
	exited   chan struct{} // closed when run returns
	err      error         // the write error that ended run; read after exited
}

func newLanes(stallTimeout time.Duration, closing <-chan struct{}, write func([]*outbound) error) *lanes {
	return &lanes{
		control:      make(chan *outbound, ControlLaneSize),
		bulk:         make(chan *outbound, BulkLaneSize),
		stallTimeout: stallTimeout,
		write:        write,
		closing:      closing,
		drainCh:      make(chan struct{}),
		stopCh:       make(chan struct{}),
		started:      make(chan struct{}),
		exited:       make(chan struct{}),
	}
}

// enqueue queues o on its lane, waiting at most stallTimeout for room.
func (l *lanes) enqueue(ctx context.Context, o *outbound) error {
	ch := l.control
	if o.lane == wire.LaneBulk {
		ch = l.bulk
	}
	l.sendMu.RLock()
	defer l.sendMu.RUnlock()
	select {
	case <-l.closing:
		return ErrClosed
	default:
	}
	select {
	case ch <- o:
		return nil
	default:
	}
	stall := time.NewTimer(l.stallTimeout)
	defer stall.Stop()
	select {
	case ch <- o:
		return nil
	case <-l.closing:
		return ErrClosed
	case <-ctx.Done():
		return fmt.Errorf("wsconn: send on %s lane: %w", o.lane, ctx.Err())
	case <-stall.C:
		return fmt.Errorf("wsconn: %s lane full for %v: %w", o.lane, l.stallTimeout, ErrStalled)
	}
}

// launch starts the writer goroutine; started is closed first so that a Close racing with
// it knows there is a writer to drain.
func (l *lanes) launch() {
	close(l.started)
	go l.run()
}

// run is the writer goroutine: control first, one lane per batch, one flush per batch.
func (l *lanes) run() {
	defer close(l.exited)
	batch := make([]*outbound, 0, MaxBatchMessages)
	for {
		first := l.next()
		if first == nil {
			return
		}
		more := l.nextControl
		if first.lane == wire.LaneBulk {
			more = l.nextBulk
		}
		batch = fillBatch(append(batch, first), more)
		err := l.write(batch)
		for i, o := range batch {
			putOutbound(o)
			batch[i] = nil
		}
		batch = batch[:0]
		if err != nil {
			l.err = err
			return
		}
	}
}

// next blocks for the frame that starts the next batch; nil means exit.
func (l *lanes) next() *outbound {
	select {
	case <-l.stopCh:
		return nil
	default:
	}
	if o, ok := l.nextControl(); ok {
		return o
	}
	if o := l.held; o != nil {
		l.held = nil
		return o
	}
	select {
	case o := <-l.control:
		return o
	case o := <-l.bulk:
		// Both lanes may have been ready and select picks at random: control still goes first.
		if c, ok := l.nextControl(); ok {
			l.held = o
			return c
		}
		return o
	case <-l.stopCh:
		return nil
	case <-l.drainCh:
		if o, ok := l.nextControl(); ok {
			return o
		}
		if o, ok := l.nextBulk(); ok {
			return o
		}
		return nil
	}
}

func (l *lanes) nextControl() (*outbound, bool) {
	select {
	case o := <-l.control:
		return o, true
	default:
		return nil, false
	}
}

// nextBulk yields to a waiting control frame so it rides the very next batch.
func (l *lanes) nextBulk() (*outbound, bool) {
	if len(l.control) > 0 {
		return nil, false
	}
	select {
	case o := <-l.bulk:
		return o, true
	default:
		return nil, false
	}
}

// fence waits until every Send that got past the closing check has queued or given up: the
// empty critical section is the point.
func (l *lanes) fence() {
	l.sendMu.Lock()
	//lint:ignore SA2001 the lock is taken only to wait out the Sends holding it
	l.sendMu.Unlock()
}

// drainAndWait lets the writer write everything queued, then waits for it to exit.
func (l *lanes) drainAndWait(ctx context.Context) error {
	l.fence()
	l.drainOne.Do(func() { close(l.drainCh) })
	select {
	case <-l.started:
	default:
		return nil // agreement never finished: nothing was ever queued
	}
	select {
	case <-l.exited:
		return l.err
	case <-ctx.Done():
		l.stop()
		return ctx.Err()
	}
}

// stop makes the writer exit at its next batch boundary, dropping what is queued.
func (l *lanes) stop() {
	l.stopOne.Do(func() { close(l.stopCh) })
}
