package store

// LogAppend says where AppendBuildLogChunk put a chunk: the build and attempt whose log it
// extends and the byte offset of its first byte in that attempt's log (gradient-server §16).
// An empty chunk is stored nowhere and answers the zero LogAppend.
type LogAppend struct {
	BuildID, AttemptID string
	Offset             int64
}
