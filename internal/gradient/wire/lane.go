package wire

// LaneKind is the writer lane a message rides after the handshake (gradient-protocol §1.5).
type LaneKind uint8

const (
	// LaneControl carries small latency-critical messages; the writer drains it first.
	LaneControl LaneKind = iota
	// LaneBulk carries payload chunks and whatever must queue behind them.
	LaneBulk
)

func (l LaneKind) String() string {
	if l == LaneBulk {
		return "bulk"
	}
	return "control"
}

// Lane says which writer lane m rides: bulk for UploadChunk, NarRequestResume, LogChunk and
// JobCompleted (which must queue behind the job's own log and upload bytes) from the worker,
// and NarPush, NarStreamHeader, NarUnavailable, NarAbort, EvalCachePullResult and
// EvalCacheChunk from the server; control for everything else.
func Lane(m Message) LaneKind {
	switch m.(type) {
	case *UploadChunk, *NarRequestResume, *LogChunk, *JobCompleted,
		*NarPush, *NarStreamHeader, *NarUnavailable, *NarAbort, *EvalCachePullResult, *EvalCacheChunk:
		return LaneBulk
	}
	return LaneControl
}
