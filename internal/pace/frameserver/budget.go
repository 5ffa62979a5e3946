package frameserver

import (
	"context"
	"runtime/debug"
	"strconv"
	"sync"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// Memory return after a burst: once the budget is empty again after holding
// at least returnAfter bytes, the heap is handed back to the OS, at most once
// per returnEvery (a forced collection costs a few milliseconds).
const (
	returnAfter = 64 << 20
	returnEvery = time.Second
)

// payloadBudget is the server-wide in-flight payload budget: every frame
// above the pooled classes is charged its declared length from its header
// until its reply is written, so concurrent large frames (STORE values,
// COMPILE sources) cannot together hold more than the limit, however many
// connections send them. Smaller frames read into pooled buffers bounded by
// the connection cap and are never charged.
type payloadBudget struct {
	limit int64
	wait  time.Duration
	ret   *memoryReturner

	mu      sync.Mutex
	used    int64
	peak    int64         // high-water mark since memory was last returned
	changed chan struct{} // closed and replaced at every release
}

func newPayloadBudget(limit int64, wait time.Duration, free func()) *payloadBudget {
	return &payloadBudget{limit: limit, wait: wait, ret: &memoryReturner{free: free, every: returnEvery},
		changed: make(chan struct{})}
}

// admit charges n bytes, waiting up to the budget's wait for room. A frame
// that could never fit is payload-too-large; one that found no room in time
// is endpoint-busy (retriable). Either is decided before any payload byte is
// read.
func (b *payloadBudget) admit(ctx context.Context, n int64) (wire.Refusal, bool) {
	if n > b.limit {
		return wire.Refuse(wire.CodePayloadTooLarge, "payload of %d bytes exceeds this server's in-flight payload budget of %d bytes", n, b.limit), false
	}
	var timeout <-chan time.Time
	for {
		b.mu.Lock()
		if b.used+n <= b.limit {
			b.used += n
			b.peak = max(b.peak, b.used)
			b.mu.Unlock()
			return wire.Refusal{}, true
		}
		changed, used := b.changed, b.used
		b.mu.Unlock()
		if timeout == nil {
			if b.wait <= 0 {
				return b.busy(n, used), false
			}
			t := time.NewTimer(b.wait)
			defer t.Stop()
			timeout = t.C
		}
		select {
		case <-changed:
		case <-timeout:
			return b.busy(n, used), false
		case <-ctx.Done():
			return b.busy(n, used), false
		}
	}
}

func (b *payloadBudget) busy(n, used int64) wire.Refusal {
	return wire.Refusal{Code: wire.CodeEndpointBusy, Message: "in-flight payload budget full: " +
		strconv.FormatInt(used, 10) + " of " + strconv.FormatInt(b.limit, 10) + " bytes held, " +
		strconv.FormatInt(n, 10) + " asked; retry"}
}

// release returns n charged bytes and wakes waiters; the budget emptying
// after a burst hands memory back to the OS.
func (b *payloadBudget) release(n int64) {
	b.mu.Lock()
	b.used -= n
	changed := b.changed
	b.changed = make(chan struct{})
	burstOver := b.used == 0 && b.peak >= returnAfter
	if burstOver {
		b.peak = 0
	}
	b.mu.Unlock()
	close(changed)
	if burstOver {
		b.ret.trigger()
	}
}

// inUse is the bytes charged now.
func (b *payloadBudget) inUse() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

// memoryReturner runs free (debug.FreeOSMemory) after a burst, at most once
// per every: without it the pages of a burst's buffers stay resident until
// the runtime's own scavenger gets round to them, minutes later.
type memoryReturner struct {
	free  func()
	every time.Duration

	mu      sync.Mutex
	pending bool
	last    time.Time
}

func (r *memoryReturner) trigger() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.pending {
		return
	}
	r.pending = true
	time.AfterFunc(max(0, r.every-time.Since(r.last)), func() {
		r.free()
		r.mu.Lock()
		r.pending, r.last = false, time.Now()
		r.mu.Unlock()
	})
}

// freeOSMemory is what the returner runs; tests replace it.
var freeOSMemory = debug.FreeOSMemory
