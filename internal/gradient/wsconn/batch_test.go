package wsconn

import (
	"testing"

	"pgregory.net/rapid"

	"github.com/buildfleet/buildfleet/internal/gradient/wire"
)

// fillBatch takes frames in order and stops exactly when a limit is reached or the lane has
// nothing ready: at most MaxBatchMessages frames, and a bulk batch takes another frame only
// while it holds less than MaxBulkBatchBytes.
func TestFillBatchLimits(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		lane := wire.LaneKind(rapid.IntRange(0, 1).Draw(t, "lane"))
		sizes := rapid.SliceOfN(rapid.IntRange(0, 600<<10), 1, 80).Draw(t, "sizes")
		queue := make([]*outbound, len(sizes))
		for i, n := range sizes {
			queue[i] = &outbound{frame: make([]byte, n), lane: lane}
		}
		next := 1
		batch := fillBatch([]*outbound{queue[0]}, func() (*outbound, bool) {
			if next == len(queue) {
				return nil, false
			}
			next++
			return queue[next-1], true
		})

		if len(batch) != next {
			t.Fatalf("batch holds %d frames but %d were taken", len(batch), next)
		}
		for i, o := range batch {
			if o != queue[i] {
				t.Fatalf("frame %d out of order", i)
			}
		}
		if len(batch) > MaxBatchMessages {
			t.Fatalf("batch of %d frames", len(batch))
		}
		before := batchBytes(batch[:len(batch)-1])
		if lane == wire.LaneBulk && before >= MaxBulkBatchBytes {
			t.Fatalf("bulk batch took a frame while holding %d bytes", before)
		}
		full := len(batch) == MaxBatchMessages || (lane == wire.LaneBulk && batchBytes(batch) >= MaxBulkBatchBytes)
		if next < len(queue) && !full {
			t.Fatalf("batch stopped at %d frames (%d bytes) with frames ready", len(batch), batchBytes(batch))
		}
	})
}
