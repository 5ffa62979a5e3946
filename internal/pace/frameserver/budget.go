package frameserver

import (
	"context"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// Memory return after a burst: once the budget is empty again after holding
// at least returnAfter bytes, the heap is handed back to the OS, at most once
// per returnEvery (a forced collection costs a few milliseconds). And a frame
// admitted while the process, with its buffer, would pass the runtime's memory
// limit first has the payloads released since the last collection collected
// and their pages returned: left to the runtime they stay resident beside the
// new buffer (a large buffer rarely fits the holes freed ones leave), and the
// process outgrows its budget by them. Payload buffers hold no pointers, so
// such a cycle marks little.
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
	limit    int64
	wait     time.Duration
	ret      *memoryReturner
	collect  func()       // debug.FreeOSMemory; see makeRoom
	resident func() int64 // memory the runtime holds from the OS now
	memLimit func() int64 // the runtime's memory limit

	churn     atomic.Int64 // bytes released since the last collection
	collectMu sync.Mutex

	mu      sync.Mutex
	used    int64
	peak    int64         // high-water mark since memory was last returned
	changed chan struct{} // closed and replaced at every release
}

func newPayloadBudget(limit int64, wait time.Duration, free func()) *payloadBudget {
	return &payloadBudget{limit: limit, wait: wait, ret: &memoryReturner{free: free, every: returnEvery},
		collect: free, resident: goResident, memLimit: goMemLimit, changed: make(chan struct{})}
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
			b.makeRoom(n)
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

// makeRoom collects, once for however many frames are admitted at once, when
// payloads were released since the last collection and the process with n
// more bytes would pass its memory limit.
func (b *payloadBudget) makeRoom(n int64) {
	if b.churn.Load() == 0 || b.resident()+n <= b.memLimit() {
		return
	}
	b.collectMu.Lock()
	defer b.collectMu.Unlock()
	if b.churn.Load() > 0 && b.resident()+n > b.memLimit() {
		b.churn.Store(0)
		b.collect()
	}
}

// goResident is the memory the Go runtime holds from the OS: everything it
// mapped less what it has handed back.
func goResident() int64 {
	s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64() - s[1].Value.Uint64())
}

// goMemLimit is the runtime's memory limit (math.MaxInt64 when none is set).
func goMemLimit() int64 { return debug.SetMemoryLimit(-1) }

// release returns n charged bytes and wakes waiters; the budget emptying
// after a burst hands memory back to the OS.
func (b *payloadBudget) release(n int64) {
	b.churn.Add(n)
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
