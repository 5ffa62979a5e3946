package wsconn

import (
	"errors"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/wire"
)

// Timeouts and sizes of gradient-protocol §1.1 and gradient-protocol §1.5.
const (
	// ConnectTimeout bounds a dial: TCP connect, TLS and the HTTP upgrade.
	ConnectTimeout = 10 * time.Second
	// HandshakeTimeout bounds the whole protocol handshake (agreement through InitAck).
	HandshakeTimeout = 15 * time.Second
	// TCPUserTimeout drops a dialed connection whose sent data stays unacknowledged this long.
	TCPUserTimeout = 120 * time.Second
	// DefaultStallTimeout is how long Send waits for room in a full lane
	// (nar.sendChunkTimeoutSecs).
	DefaultStallTimeout = 30 * time.Second

	// ControlLaneSize and BulkLaneSize are the lane queue lengths.
	ControlLaneSize = 256
	BulkLaneSize    = 16
	// MaxBatchMessages is the most frames written between two flushes.
	MaxBatchMessages = 32
	// MaxBulkBatchBytes stops a bulk batch from taking more frames once it holds this much.
	MaxBulkBatchBytes = 256 << 10
)

// WebSocket close codes this package sends.
const (
	CloseNormal          = 1000
	CloseProtocolError   = wire.CloseProtocolError // failed agreement, oversized handshake frame
	CloseUnsupportedData = 1003                    // a text message before the session runs
	ClosePolicyViolation = 1008                    // after a Reject (gradient-server §10.4)
	CloseMessageTooBig   = 1009                    // a frame over the session cap
)

var (
	// ErrClosed: the socket was closed (by this side, the peer or a failure); Err tells why.
	ErrClosed = errors.New("wsconn: connection closed")
	// ErrStalled: a Send waited longer than the stall timeout for room in its lane.
	ErrStalled = errors.New("wsconn: send stalled")
	// ErrMessageTooBig: a frame was over the read cap (the socket is closed), or a message to
	// send encodes larger than the session cap (nothing was sent).
	ErrMessageTooBig = errors.New("wsconn: message too big")
	// ErrTextMessage: a text message arrived before the session ran (the socket is closed).
	ErrTextMessage = errors.New("text message before the session")
)
