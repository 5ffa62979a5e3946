package frameserver

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

func TestCompileProgressThenOk(t *testing.T) {
	_, addr := startServer(t, Config{})
	c := dial(t, addr)
	fields := make([][]byte, 10)
	fields[0] = []byte("token")
	c.send(wire.AppendRequest(nil, wire.OpCompile, fields...))
	// Read frame by frame: two Progress pulses precede the terminal Ok.
	var statuses []wire.Status
	var scratch [wire.ReplyHeaderLen]byte
	for {
		h, err := wire.ReadReplyHeader(c.br, &scratch)
		if err != nil {
			t.Fatal(err)
		}
		body := make([]byte, h.PayloadLen)
		io.ReadFull(c.br, body)
		statuses = append(statuses, h.Status)
		if h.Status.Terminal() {
			if string(body) != "token" {
				t.Fatalf("Ok body %q", body)
			}
			break
		}
	}
	if len(statuses) != 3 || statuses[0] != wire.StatusProgress || statuses[1] != wire.StatusProgress || statuses[2] != wire.StatusOk {
		t.Fatalf("statuses %v, want Progress Progress Ok", statuses)
	}
}

func TestInterimOnlyDuringARequestThatAllowsIt(t *testing.T) {
	var conn *Conn
	h := HandlerFunc(func(ctx context.Context, c *Conn, req *Request) Reply {
		conn = c
		if err := c.Progress(); err != ErrNoInterim {
			return Refuse(wire.Refusal{Code: wire.CodeMalformedFrame, Message: "Progress allowed on FETCH"})
		}
		return Ok(nil)
	})
	_, addr := startServer(t, Config{Handler: h})
	c := dial(t, addr)
	c.send(fetch("x"))
	c.expectOk(wire.OpFetch, "")
	if err := conn.Progress(); err != ErrNoInterim {
		t.Fatalf("Progress after the reply: %v", err)
	}
}

func TestStreamedBodyFromFile(t *testing.T) {
	content := bytes.Repeat([]byte("object bytes "), 100000)
	path := filepath.Join(t.TempDir(), "blob")
	if err := os.WriteFile(path, content, 0o600); err != nil {
		t.Fatal(err)
	}
	h := HandlerFunc(func(ctx context.Context, c *Conn, req *Request) Reply {
		f, err := os.Open(path)
		if err != nil {
			return RefuseCode(wire.CodeStorageWriteFailed)
		}
		n := uint32(len(content) - 10)
		// The value past a 10-byte stored header, as a store would send it:
		// either a section reader, or the file itself positioned at the
		// section (the sendfile path).
		if string(req.Fields[0]) == "section" {
			return OkBody(io.NewSectionReader(f, 10, int64(n)), n, func() { f.Close() })
		}
		if _, err := f.Seek(10, io.SeekStart); err != nil {
			f.Close()
			return RefuseCode(wire.CodeStorageWriteFailed)
		}
		return OkBody(f, n, func() { f.Close() })
	})
	_, addr := startServer(t, Config{Handler: h})
	c := dial(t, addr)
	c.send(fetch("section"), fetch("file"))
	c.expectOk(wire.OpFetch, string(content[10:]))
	c.expectOk(wire.OpFetch, string(content[10:]))
}

func TestShortBodyEndsConnection(t *testing.T) {
	h := HandlerFunc(func(ctx context.Context, c *Conn, req *Request) Reply {
		return OkBody(bytes.NewReader([]byte("short")), 100, nil)
	})
	obs := newCountingObserver()
	_, addr := startServer(t, Config{Handler: h, Observer: obs})
	c := dial(t, addr)
	c.send(fetch("a"))
	if r := obs.waitClosed(t); r != ClosedWriteFailed {
		t.Fatalf("closed for %s, want write_failed", r)
	}
}

func TestHandlerPanicClosesOnlyThatConnection(t *testing.T) {
	obs := newCountingObserver()
	_, addr := startServer(t, Config{Observer: obs})
	other := dial(t, addr)
	c := dial(t, addr)
	c.send(fetch("panic"))
	c.expectClosed()
	if r := obs.waitClosed(t); r != ClosedByHandler {
		t.Fatalf("closed for %s", r)
	}
	other.send(fetch("alive"))
	other.expectOk(wire.OpFetch, "alive")
}

func TestIllegalReplyStatusEndsConnection(t *testing.T) {
	h := HandlerFunc(func(ctx context.Context, c *Conn, req *Request) Reply { return Miss() })
	_, addr := startServer(t, Config{Handler: h})
	c := dial(t, addr)
	c.send(wire.AppendRequest(nil, wire.OpStore, []byte("k"), nil, nil, nil, []byte("v")))
	c.expectClosed() // a Miss to STORE would be a protocol failure at the client
}

func TestLargeStoreAndKeep(t *testing.T) {
	h := &testHandler{}
	_, addr := startServer(t, Config{Handler: h})
	c := dial(t, addr)
	value := bytes.Repeat([]byte{0x5A}, 8<<20)
	small := []byte("small value kept by the handler")
	c.send(wire.AppendRequest(nil, wire.OpStore, []byte("big"), nil, nil, nil, value))
	c.expectOk(wire.OpStore, "")
	c.send(wire.AppendRequest(nil, wire.OpStore, []byte("keep"), nil, nil, nil, small))
	c.expectOk(wire.OpStore, "")
	// Later requests reuse buffers; the kept fields must not change.
	for range 5 {
		c.send(wire.AppendRequest(nil, wire.OpStore, []byte("over"), []byte("write"), nil, nil, bytes.Repeat([]byte{'x'}, len(small))))
		c.expectOk(wire.OpStore, "")
	}
	if string(h.kept[0]) != "keep" || !bytes.Equal(h.kept[4], small) {
		t.Fatalf("kept fields changed: %q %q", h.kept[0], h.kept[4])
	}
}

func TestLoopbackAndAddresses(t *testing.T) {
	var loop bool
	h := HandlerFunc(func(ctx context.Context, c *Conn, req *Request) Reply {
		loop = c.IsLoopback() && c.RemoteAddr() != nil && c.LocalAddr() != nil && c.Version() == 1
		return Ok(nil)
	})
	_, addr := startServer(t, Config{Handler: h})
	c := dial(t, addr)
	c.send(fetch("x"))
	c.expectOk(wire.OpFetch, "")
	if !loop {
		t.Fatal("a 127.0.0.1 peer must be loopback, with addresses and version 1")
	}
}
