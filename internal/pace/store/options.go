package store

import (
	"fmt"
	"log/slog"
)

// SyncPolicy says how hard a Put works to survive a power loss.
type SyncPolicy uint8

const (
	// SyncAlways fsyncs each blob before its rename and the shard directory after it, before
	// Put returns. The default.
	SyncAlways SyncPolicy = iota
	// SyncNever relies on rename atomicity alone: a kill -9 still never exposes a partial
	// value, but a power loss may lose recent acknowledged values.
	SyncNever
)

// MaxKeyLen bounds keys. pace-cc's keys are 64 hex characters; the bound only keeps a hostile
// peer from making the index hold megabyte keys.
const MaxKeyLen = 1024

// Reserved first bytes of internal keys (pace-wire §2.5): prefetch-group cohorts and
// memberships.
const (
	ReservedPrefixCohort = 0x01
	ReservedPrefixMember = 0x02
)

// Options configure Open.
type Options struct {
	// Dir is the disk tier's directory; empty means memory-only.
	Dir string
	// MaxDisk caps the disk tier in blob bytes (value, key and 24 bytes of framing); 0 is
	// unbounded.
	MaxDisk int64
	// MaxMemory caps the memory tier in key+value bytes; 0 disables it (then Dir is required).
	MaxMemory int64
	// Sync defaults to SyncAlways.
	Sync SyncPolicy
	// FS is the filesystem of the disk tier; nil means the operating system's. Tests inject
	// faults through it (see storetest.FaultFS).
	FS FS
	// Logger receives corrupt-blob and I/O-failure reports; nil discards them.
	Logger *slog.Logger
}

func (o Options) validate() error {
	switch {
	case o.MaxDisk < 0 || o.MaxMemory < 0:
		return fmt.Errorf("negative byte budget (disk %d, memory %d)", o.MaxDisk, o.MaxMemory)
	case o.Dir == "" && o.MaxMemory == 0:
		return ErrNoTier
	case o.Sync > SyncNever:
		return fmt.Errorf("unknown sync policy %d", o.Sync)
	}
	return nil
}

func (o Options) logger() *slog.Logger {
	if o.Logger != nil {
		return o.Logger
	}
	return slog.New(slog.DiscardHandler)
}

func (o Options) fs() FS {
	if o.FS != nil {
		return o.FS
	}
	return OSFS{}
}
