package history

import "github.com/buildfleet/buildfleet/internal/pace/verbs"

// Series are the figures a bucket carries, in their packed order (verbs.HistorySeries of
// them). Counters are sent cumulative, raw: a reader takes differences and treats a negative
// one (a restart) as a gap.
const (
	CacheItems          = iota // items held, every tier (gauge)
	CacheBytes                 // bytes held, every tier (gauge)
	CacheHits                  // cache hits since the node started (counter)
	CacheMisses                // cache misses since the node started (counter)
	OfferableSlots             // slots the worker offers the fleet: 0 when cordoned or without one (gauge)
	CompilesInFlight           // compiles running at the sample (gauge)
	CompilesDone               // compiles finished since the node started (counter)
	CompileMilliseconds        // time spent compiling since the node started, summed over slots (counter)
	AvailableMemory            // bytes (gauge)
	FreeScratch                // bytes under the worker's scratch root (gauge)
	// The three below came after the first ten: an older node does not pack them, and the
	// bucket marks them absent (verbs.HistoryBucket.Absent).
	CPUBusyTicks  // the host's busy jiffies since boot, /proc/stat's cpu line less idle and iowait (counter)
	CPUTotalTicks // the host's jiffies since boot (counter)
	// CompilesRefusedNoSlot counts compiles the worker turned away because every slot was busy,
	// since the node started (counter). A worker never queues a compile (the request after the
	// last slot is refused at once and the client compiles locally), so this is the honest
	// "queued" figure: demand the worker had no room for.
	CompilesRefusedNoSlot
)

// Bucket is one closed minute as the load record carries it.
type Bucket = verbs.HistoryBucket

// Values is one sample of every series.
type Values = [verbs.HistorySeries]uint64

// Width is a bucket's span: one sample a minute.
const Width int64 = 60_000

// BucketStart is the start, in Unix milliseconds, of the bucket holding the instant ms.
func BucketStart(ms int64) int64 { return ms - ms%Width }
