// Package store is pace's content-addressed object store: an optional in-memory LRU tier in
// front of an optional disk tier, each with its own byte budget.
//
// Disk layout under the directory given to Open:
//
//	LOCK               flock'd for the life of the Store; holds the owner's pid
//	FORMAT             "pace-store 1": a different layout is refused at Open
//	objects/xx/<hash>  one blob per key; xx is the first byte of hash, hash = hex BLAKE3-256(key)
//	objects/xx/tmp-*   a write in progress; swept at Open
//
// A blob is [magic "PCSB"][u8 version][u8 codec][u16 0][u32 keyLen][u64 valueLen][key][value]
// [u32 CRC-32C of everything before it]. A Put writes a temp file beside its final name, fsyncs
// it (unless Sync is SyncNever), renames it into place and fsyncs the shard directory, and only
// then returns: a kill -9 at any point leaves either the old state or the complete new blob, and
// every value a Put acknowledged is found again after a restart. Every read from disk checks the
// length, the checksum and the key; a blob that fails is a miss, is removed and is counted.
//
// Budgets: a Put reserves its blob's bytes before writing, evicting least-recently-used
// committed blobs to make room (bytes used plus bytes reserved never exceed MaxDisk), and
// releases the reservation if the write fails. After a restart the LRU order is rebuilt from
// file modification times, i.e. from write order: reads do not touch mtimes, so a hit never
// costs a metadata write.
//
// Concurrency: no lock is held across file data I/O. A small per-shard lock orders the
// metadata steps of one key (rename, unlink, memory fill) so that a concurrent eviction,
// deletion or corruption sweep can never remove a newer blob of the same key.
package store
