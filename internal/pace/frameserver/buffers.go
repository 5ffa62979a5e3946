package frameserver

import (
	"io"
	"sync"
)

// Payload buffer classes. Requests up to the largest class read into a
// pooled buffer; anything larger (a STORE value) ends in a buffer of
// exactly its length, allocated only after the cap check admitted it and
// grown from growStart as bytes actually arrive, so a peer that declares
// 256 MiB and sends nothing costs growStart, not 256 MiB. Once a sixteenth
// has arrived the buffer jumps to its full length, so reading n bytes never
// holds more than n + n/8 at once (doubling all the way could hold 1.5n).
const (
	smallPayload = 4 << 10
	largePayload = 64 << 10
	growStart    = 256 << 10
)

var (
	smallPool = sync.Pool{New: func() any { b := make([]byte, smallPayload); return &b }}
	largePool = sync.Pool{New: func() any { b := make([]byte, largePayload); return &b }}
)

// pooledBuffer returns a pooled buffer of n bytes, or nil when n is above
// the largest class.
func pooledBuffer(n int) ([]byte, *[]byte) {
	switch {
	case n <= smallPayload:
		p := smallPool.Get().(*[]byte)
		return (*p)[:n], p
	case n <= largePayload:
		p := largePool.Get().(*[]byte)
		return (*p)[:n], p
	}
	return nil, nil
}

// readGrowing reads exactly n bytes into a buffer whose capacity ends at
// exactly n, doubling from growStart only once the bytes so far arrived.
func readGrowing(r io.Reader, n int) ([]byte, error) {
	buf := make([]byte, 0, min(n, growStart))
	for len(buf) < n {
		if len(buf) == cap(buf) {
			bigger := make([]byte, len(buf), nextCap(cap(buf), n))
			copy(bigger, buf)
			buf = bigger
		}
		got, err := io.ReadFull(r, buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+got]
		if err != nil {
			return nil, err
		}
	}
	return buf, nil
}

// nextCap is the capacity after c when reading n bytes: double, or all of n
// once doubling reaches an eighth of it.
func nextCap(c, n int) int {
	if next := 2 * c; next < n/8 {
		return next
	}
	return n
}

// recycle returns a pooled payload buffer.
func recycle(p *[]byte) {
	switch cap(*p) {
	case smallPayload:
		smallPool.Put(p)
	case largePayload:
		largePool.Put(p)
	}
}
