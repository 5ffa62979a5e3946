package wsconn

import (
	"sync"

	"github.com/buildfleet/buildfleet/internal/gradient/wire"
)

// outbound is one encoded frame waiting in a lane. The writer owns it once it is queued and
// recycles it after writing.
type outbound struct {
	frame []byte
	lane  wire.LaneKind
}

// Encode buffers are pooled per lane: a bulk chunk needs about BulkChunkSize, a control frame
// a few hundred bytes, and a shared pool would hand small buffers to chunk encoders.
const (
	controlFrameCap    = 1 << 10
	controlFrameMaxCap = 64 << 10
	bulkFrameCap       = wire.BulkChunkSize + 16<<10
	bulkFrameMaxCap    = 2 * bulkFrameCap
)

var outboundPools = [2]sync.Pool{
	wire.LaneControl: {New: func() any {
		return &outbound{frame: make([]byte, 0, controlFrameCap), lane: wire.LaneControl}
	}},
	wire.LaneBulk: {New: func() any {
		return &outbound{frame: make([]byte, 0, bulkFrameCap), lane: wire.LaneBulk}
	}},
}

func getOutbound(lane wire.LaneKind) *outbound {
	return outboundPools[lane].Get().(*outbound)
}

// putOutbound recycles o unless it grew past its lane's usual size (pooling rare 8 MiB
// frames would pin memory for every later control reply).
func putOutbound(o *outbound) {
	maxCap := controlFrameMaxCap
	if o.lane == wire.LaneBulk {
		maxCap = bulkFrameMaxCap
	}
	if cap(o.frame) > maxCap {
		return
	}
	o.frame = o.frame[:0]
	outboundPools[o.lane].Put(o)
}

// fillBatch extends batch, which holds its first frame, with frames of the same lane from
// next until the batch holds MaxBatchMessages frames or, on the bulk lane, at least
// MaxBulkBatchBytes bytes. next returns false when the lane has nothing ready (or should
// yield); it never blocks.
func fillBatch(batch []*outbound, next func() (*outbound, bool)) []*outbound {
	bulk := batch[0].lane == wire.LaneBulk
	size := batchBytes(batch)
	for len(batch) < MaxBatchMessages && (!bulk || size < MaxBulkBatchBytes) {
		o, ok := next()
		if !ok {
			break
		}
		batch = append(batch, o)
		size += len(o.frame)
	}
	return batch
}

// batchBytes is the total frame size of batch.
func batchBytes(batch []*outbound) int {
	n := 0
	for _, o := range batch {
		n += len(o.frame)
	}
	return n
}
