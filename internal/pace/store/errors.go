package store

import "errors"

var (
	// ErrNotFound is a miss. Corrupt blobs and failed reads are misses too (they wrap it).
	ErrNotFound = errors.New("not found")
	// ErrInvalidKey: an empty key, one longer than MaxKeyLen, or a client key starting with a
	// byte reserved for internal records (pace-wire §5.6). Servers answer malformed-frame.
	ErrInvalidKey = errors.New("invalid key")
	// ErrTooLarge: the value cannot fit in the whole budget of the tier that must hold it.
	ErrTooLarge = errors.New("value larger than the store's byte budget")
	// ErrWriteFailed: the disk write of a Put failed; nothing was stored and the budget
	// reservation was released. Servers answer storage-write-failed.
	ErrWriteFailed = errors.New("store write failed")
	// ErrClosed: the Store has been closed.
	ErrClosed = errors.New("store closed")
	// ErrLocked: another process (or another Open in this one) holds the directory.
	ErrLocked = errors.New("store directory in use")
	// ErrLayout: the directory holds a store of another on-disk layout.
	ErrLayout = errors.New("incompatible store layout")
	// ErrNoTier: neither a directory nor a memory budget was given.
	ErrNoTier = errors.New("store has neither a directory nor a memory budget")
)

// errCorrupt marks a blob that failed verification; it never leaves the package.
var errCorrupt = errors.New("corrupt blob")
