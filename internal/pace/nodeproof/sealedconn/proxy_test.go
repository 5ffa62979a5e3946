package sealedconn

import (
	"io"
	"net"
	"sync"
	"testing"
)

// mitm is a man in the middle between a client and the scheduler that
// forwards bytes and, when armed, damages one direction of the stream.
type mitm struct {
	addr     string
	up, down tamper // client→server, server→client
}

// tamper is what the proxy does to one direction.
type tamper struct {
	mu        sync.Mutex
	forwarded int64
	flipAt    int64 // stream offset of the byte to flip; -1 none
	dupLen    int   // forward the next dupLen bytes twice
}

// flipNext arms a flip of byte off of what this direction sends next.
func (t *tamper) flipNext(off int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.flipAt = t.forwarded + off
}

// duplicateNext arms a replay of the next n bytes (one frame).
func (t *tamper) duplicateNext(n int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.dupLen = n
}

func startMITM(t *testing.T, target string) *mitm {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	m := &mitm{addr: l.Addr().String()}
	m.up.flipAt, m.down.flipAt = -1, -1
	t.Cleanup(func() { l.Close() })
	go func() {
		client, err := l.Accept()
		if err != nil {
			return
		}
		server, err := net.Dial("tcp", target)
		if err != nil {
			client.Close()
			return
		}
		t.Cleanup(func() { client.Close(); server.Close() })
		go m.up.pump(server, client)
		go m.down.pump(client, server)
	}()
	return m
}

// pump forwards src to dst, applying what is armed; it ends with either
// side, closing both.
func (t *tamper) pump(dst, src net.Conn) {
	defer dst.Close()
	defer src.Close()
	buf := make([]byte, 64<<10)
	for {
		n, err := src.Read(buf)
		if err != nil {
			return
		}
		if _, err := dst.Write(t.apply(src, buf[:n])); err != nil {
			return
		}
	}
}

// apply damages a chunk as armed and counts it forwarded.
func (t *tamper) apply(src io.Reader, chunk []byte) []byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.dupLen > 0 {
		if len(chunk) < t.dupLen {
			rest := make([]byte, t.dupLen-len(chunk))
			if _, err := io.ReadFull(src, rest); err == nil {
				chunk = append(chunk, rest...)
			}
		}
		if len(chunk) >= t.dupLen {
			frame := chunk[:t.dupLen:t.dupLen]
			chunk = append(append(append([]byte(nil), frame...), frame...), chunk[t.dupLen:]...)
		}
		t.dupLen = 0
	}
	if off := t.flipAt - t.forwarded; t.flipAt >= 0 && off < int64(len(chunk)) {
		chunk[off] ^= 0x01
		t.flipAt = -1
	}
	t.forwarded += int64(len(chunk))
	return chunk
}
