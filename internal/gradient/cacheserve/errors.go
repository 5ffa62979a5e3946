package cacheserve

import "errors"

var (
	// ErrForbidden: the message is not allowed on this session (an upload or a Push query
	// on a read-only cache session). The caller answers Reject 403 and keeps the session
	// (gradient-protocol §7.1).
	ErrForbidden = errors.New("cacheserve: not allowed on a read-only cache session")
	// ErrClosed: the session was closed.
	ErrClosed = errors.New("cacheserve: session closed")
	// ErrInProgress: Admission refused because another upload of the same path holds a
	// lease; the upload is granted Skip (coalesced).
	ErrInProgress = errors.New("cacheserve: an upload of this path is in progress")
	// ErrFull: Admission has no room; the upload is answered Retry. The error says which
	// limit was reached.
	ErrFull = errors.New("cacheserve: upload admission is full")
)
