package httpfront

import "time"

// Limits bound the public listener.
type Limits struct {
	// MaxConns caps open connections in total; 0 means DefaultMaxConns().
	MaxConns int
	// MaxConnsPerAddr caps open connections from one remote IP address.
	MaxConnsPerAddr int
	// IdleTimeout closes a keep-alive connection that sent no new request for this long.
	IdleTimeout time.Duration
	// HeaderTimeout bounds reading a request head.
	HeaderTimeout time.Duration
	// BodyTimeout bounds reading a request body, from the end of its head.
	BodyTimeout time.Duration
}

// Defaults of the public listener (cmd/gradient-server's flags).
const (
	DefaultMaxConnsPerAddr = 128
	DefaultIdleTimeout     = 60 * time.Second
	DefaultHeaderTimeout   = 10 * time.Second
	DefaultBodyTimeout     = 60 * time.Second
	// MaxHeaderBytes bounds a request head, so a connection dripping headers holds little
	// memory (net/http's default is 1 MiB).
	MaxHeaderBytes = 64 << 10
	// newGrace is how long a connection may go without a complete request head before it
	// may be closed to make room; a client that means to send one has done so by then.
	newGrace = 2 * time.Second
	// maxDerivedConns and minDerivedConns clamp the cap derived from the open-file limit.
	maxDerivedConns = 4096
	minDerivedConns = 64
)

// DefaultLimits are the limits cmd/gradient-server starts with.
var DefaultLimits = Limits{MaxConnsPerAddr: DefaultMaxConnsPerAddr, IdleTimeout: DefaultIdleTimeout,
	HeaderTimeout: DefaultHeaderTimeout, BodyTimeout: DefaultBodyTimeout}

// DefaultMaxConns is three quarters of the process's open-file limit, between 64 and 4096,
// so the listener stops taking connections before accept runs out of descriptors and the
// rest (the database, NAR files, outgoing dials) keeps a quarter.
func DefaultMaxConns() int {
	n, ok := openFileLimit()
	if !ok {
		return maxDerivedConns
	}
	return derivedMaxConns(n)
}

func derivedMaxConns(openFiles uint64) int {
	return int(min(max(openFiles*3/4, minDerivedConns), maxDerivedConns))
}
