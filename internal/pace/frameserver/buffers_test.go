package frameserver

import (
	"bytes"
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
