package frameserver

import (
	"bytes"
	"encoding/binary"
	"io"
	"runtime"
	"testing"
	"testing/iotest"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

func TestReadGrowingEndsExactlySized(t *testing.T) {
	for _, n := range []int{largePayload + 1, growStart, growStart + 1, 3*growStart + 7, 5 << 20} {
		data := bytes.Repeat([]byte{1, 2, 3, 4, 5, 6, 7}, n/7+1)[:n]
		got, err := readGrowing(iotest.HalfReader(bytes.NewReader(data)), n)
		if err != nil || !bytes.Equal(got, data) || cap(got) != n {
			t.Fatalf("n=%d: err %v, equal %v, cap %d", n, err, bytes.Equal(got, data), cap(got))
		}
	}
	if _, err := readGrowing(bytes.NewReader(make([]byte, 100)), growStart+1); err != io.ErrUnexpectedEOF {
		t.Fatalf("short stream: %v", err)
	}
}

func TestDeclaredSizeIsNotAllocatedBeforeBytesArrive(t *testing.T) {
	obs := newCountingObserver()
	_, addr := startServer(t, Config{Observer: obs, FrameTimeout: 100 * time.Millisecond})
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	// Eight connections each declare a 256 MiB STORE and send 1 KiB of it.
	for range 8 {
		c := dial(t, addr)
		c.send(rawFrame(1, wire.OpStore, wire.DefaultSessionCap, make([]byte, 1024)))
	}
	for range 8 {
		if r := obs.waitClosed(t); r != ClosedStalled {
			t.Fatalf("closed for %s", r)
		}
	}
	runtime.ReadMemStats(&after)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<20 {
		t.Fatalf("8 stalled 256 MiB declarations allocated %d MiB", grew>>20)
	}
}

func TestAServedPayloadIsNotRetainedByItsConnection(t *testing.T) {
	for _, frame := range []struct {
		name    string
		trailer []byte // after a well-formed STORE: none, or a byte that makes it malformed
		code    wire.Code
	}{{"served", nil, 0}, {"malformed", []byte{0}, wire.CodeMalformedFrame}} {
		t.Run(frame.name, func(t *testing.T) {
			_, addr := startServer(t, Config{})
			c := dial(t, addr)
			payload := wire.AppendRequest(nil, wire.OpStore, []byte("k"), nil, nil, nil, make([]byte, 64<<20))
			payload = append(payload, frame.trailer...)
			binary.BigEndian.PutUint32(payload[3:7], uint32(len(payload)-wire.RequestHeaderLen))
			c.send(payload)
			payload = nil
			if frame.code != 0 {
				c.expectRefusal(wire.OpStore, frame.code)
			} else {
				c.expectOk(wire.OpStore, "")
			}
			var m runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&m)
			if m.HeapInuse > 32<<20 {
				t.Fatalf("%d MiB of heap in use after the reply: the idle connection holds its 64 MiB payload", m.HeapInuse>>20)
			}
		})
	}
}
