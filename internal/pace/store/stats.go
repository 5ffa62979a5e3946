package store

// TierStats describe one tier. A tier that is not configured has Enabled false and emits no
// metrics (never sum tiers: memory caches disk).
type TierStats struct {
	Enabled    bool
	Items      int64
	Bytes      int64 // memory: key+value bytes; disk: blob bytes
	Limit      int64 // 0 = unbounded
	IndexBytes int64 // estimated resident cost of the tier's index
	Hits       uint64
	Misses     uint64
	Evictions  uint64
}

// Stats is a snapshot of a Store's gauges and counters, for metrics.
type Stats struct {
	Memory TierStats
	Disk   TierStats
	// Hits and Misses count Get calls, whichever tier answered.
	Hits   uint64
	Misses uint64
	// Reserved is the disk bytes reserved by writes in flight. Disk.Bytes+Reserved never
	// exceeds Disk.Limit when there is one.
	Reserved int64
	// CorruptRemoved counts blobs that failed verification (checksum, length, key) and were
	// removed, on read or at Open.
	CorruptRemoved uint64
	// WriteFailures counts Puts that failed on disk I/O.
	WriteFailures uint64
	// ReadFailures counts disk reads that failed for reasons other than corruption (answered
	// as misses).
	ReadFailures uint64
	// TempFilesSwept counts leftover temp files of interrupted writes removed at Open.
	TempFilesSwept uint64
}
