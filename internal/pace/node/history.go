package node

import (
	"context"
	"os"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/history"
	"github.com/buildfleet/buildfleet/internal/pace/worker"
)

// sampleHistory closes a minute of this node's history a second after each minute ends
// (pace-node §6.5), leader or not. The buckets wait in the outbox for the next heartbeat:
// nothing extra is dialled.
func (n *Node) sampleHistory(ctx context.Context) {
	for {
		now := n.now()
		next := time.UnixMilli(history.BucketStart(now.UnixMilli()) + history.Width).Add(time.Second)
		t := time.NewTimer(next.Sub(now))
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
			n.closeHistoryMinute(n.now())
		}
	}
}

// closeHistoryMinute samples every series now, as the bucket of the minute that just ended.
func (n *Node) closeHistoryMinute(at time.Time) {
	n.historyOut.Close(at.UnixMilli(), n.historyValues())
}

func (n *Node) historyValues() history.Values {
	var v history.Values
	if n.tier != nil {
		st := n.tier.Stats()
		v[history.CacheItems] = uint64(max(st.Memory.Items+st.Disk.Items, 0))
		v[history.CacheBytes] = uint64(max(st.Memory.Bytes+st.Disk.Bytes, 0))
		v[history.CacheHits], v[history.CacheMisses] = st.Hits, st.Misses
	}
	v[history.AvailableMemory] = memAvailable()
	v[history.CPUBusyTicks], v[history.CPUTotalTicks] = cpuTicks()
	if n.work == nil {
		return v
	}
	st := n.work.Status()
	if st.Cordon == worker.CordonServing && !st.Stopping {
		v[history.OfferableSlots] = uint64(st.Slots)
	}
	v[history.CompilesInFlight] = uint64(st.InFlight)
	c := n.work.Counters()
	v[history.CompilesDone], v[history.CompileMilliseconds] = c.JobsCompleted.Load(), c.CompileMilliseconds.Load()
	v[history.CompilesRefusedNoSlot] = c.RefusedNoSlot.Load()
	if free, ok := freeBytes(st.ScratchRoot); ok {
		v[history.FreeScratch] = free
	}
	return v
}

// cpuTicks is the host's busy and total jiffies since boot, read from the /proc/stat line the
// heartbeat's busy share is computed from; 0 and 0 where it is unreadable, which leaves a
// reader's busy share unknown (no ticks passed) rather than idle.
func cpuTicks() (busy, all uint64) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0
	}
	busy, all, _ = parseCPULine(b)
	return busy, all
}
