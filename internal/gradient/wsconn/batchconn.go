package wsconn

import (
	"errors"
	"net"
	"sync"
	"sync/atomic"

	"github.com/buildfleet/buildfleet/internal/gradient/wire"
)

// batchPendingSize is how much a batch may hold before it is written early. Small control
// frames of a batch fit many times over; the client side, whose library writes masked frames
// in 4 KiB pieces, sends a 512 KiB chunk in 64 KiB writes instead of 4 KiB ones.
const batchPendingSize = 64 << 10

// batchConn sits under the WebSocket library and turns "write every frame of a batch, then
// flush" into as few syscalls as possible. coder/websocket flushes its own buffer after
// every frame; while a batch is open those flushes land here, and flush sends them at once.
// Large writes are never copied: they leave together with what is pending in one vectored
// write. Writes outside a batch (the library's pongs and close frames) go straight through.
type batchConn struct {
	net.Conn

	mu      sync.Mutex
	open    bool
	pending []byte
	vecArr  [2][]byte   // backing for vectored writes, so they allocate nothing
	vec     net.Buffers // WriteTo consumes it; lives here so it does not escape per call
	err     error       // sticky: after a failed write the byte stream is broken

	writes atomic.Int64 // writes handed to the socket, for tests

	// The read side, on accepted connections only (watchFrames): inbound frame headers are
	// followed so that one declaring more than the cap fails the reads at once. Reads come
	// from one goroutine at a time (the library's read lock).
	scan    *frameScan
	limit   atomic.Pointer[atomic.Int64] // the socket's current read cap; nil: the handshake cap
	overCap atomic.Bool
}

func newBatchConn(c net.Conn) *batchConn { return &batchConn{Conn: c} }

// errDeclaredOverCap fails every read once a frame header declared a message over the cap;
// the socket then closes with the size code (socket.readFailure).
var errDeclaredOverCap = errors.New("wsconn: a frame header declared a message over the read cap")

// watchFrames starts following inbound frame headers. prefix is what the HTTP server had
// buffered past the upgrade request, which the library reads before this connection.
func (b *batchConn) watchFrames(prefix []byte) {
	b.scan = &frameScan{}
	if b.scan.feed(prefix, b.readCap) {
		b.overCap.Store(true)
	}
}

func (b *batchConn) readCap() int64 {
	if l := b.limit.Load(); l != nil {
		return l.Load()
	}
	return wire.MaxHandshakeMessageSize
}

// declaredOverCap reports whether a frame header declared a message over the cap.
func (b *batchConn) declaredOverCap() bool { return b.overCap.Load() }

func (b *batchConn) Read(p []byte) (int, error) {
	if b.scan == nil {
		return b.Conn.Read(p)
	}
	if b.overCap.Load() {
		return 0, errDeclaredOverCap
	}
	n, err := b.Conn.Read(p)
	if n > 0 && b.scan.feed(p[:n], b.readCap) {
		b.overCap.Store(true)
	}
	return n, err
}

// openBatch starts holding writes.
func (b *batchConn) openBatch() {
	b.mu.Lock()
	b.open = true
	if b.pending == nil {
		b.pending = make([]byte, 0, batchPendingSize)
	}
	b.mu.Unlock()
}

// flush ends the batch and writes what it holds.
func (b *batchConn) flush() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.open = false
	if b.err != nil || len(b.pending) == 0 {
		return b.err
	}
	_, err := b.writeOut(nil)
	return err
}

func (b *batchConn) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.err != nil {
		return 0, b.err
	}
	if b.open && len(b.pending)+len(p) <= cap(b.pending) {
		b.pending = append(b.pending, p...)
		return len(p), nil
	}
	return b.writeOut(p)
}

// writeOut writes pending and then p (either may be empty) and reports how much of p went.
func (b *batchConn) writeOut(p []byte) (int, error) {
	held := len(b.pending)
	var n int64
	var err error
	switch {
	case held == 0:
		var m int
		m, err = b.Conn.Write(p)
		n = int64(m)
	case len(p) == 0:
		var m int
		m, err = b.Conn.Write(b.pending)
		n = int64(m)
	default:
		b.vecArr = [2][]byte{b.pending, p}
		b.vec = b.vecArr[:]
		n, err = b.vec.WriteTo(b.Conn) // one writev on a TCP socket
		b.vecArr = [2][]byte{}         // do not keep the caller's buffer reachable
	}
	b.writes.Add(1)
	b.pending = b.pending[:0]
	if err != nil {
		b.err = err
	}
	return int(max(0, n-int64(held))), err
}
