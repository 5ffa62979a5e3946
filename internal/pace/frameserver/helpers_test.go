package frameserver

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// clientTimeout bounds every client read in tests so a bug hangs nothing;
// it is a safety net, never the thing asserted.
const clientTimeout = 10 * time.Second

// countingObserver records every event.
type countingObserver struct {
	mu       sync.Mutex
	accepted int
	rejected map[RejectReason]int
	refused  map[RefusalKind]int
	closed   map[CloseReason]int
	closedCh chan CloseReason
}

func newCountingObserver() *countingObserver {
	return &countingObserver{refused: map[RefusalKind]int{}, closed: map[CloseReason]int{},
		rejected: map[RejectReason]int{}, closedCh: make(chan CloseReason, 4096)}
}

func (o *countingObserver) ConnAccepted() { o.mu.Lock(); o.accepted++; o.mu.Unlock() }
func (o *countingObserver) ConnRejected(r RejectReason) {
	o.mu.Lock()
	o.rejected[r]++
	o.mu.Unlock()
}
func (o *countingObserver) Refused(k RefusalKind) {
	o.mu.Lock()
	o.refused[k]++
	o.mu.Unlock()
}
func (o *countingObserver) ConnClosed(r CloseReason) {
	o.mu.Lock()
	o.closed[r]++
	o.mu.Unlock()
	o.closedCh <- r
}

func (o *countingObserver) refusals(k RefusalKind) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.refused[k]
}

// waitClosed waits for the next connection close and returns its reason.
func (o *countingObserver) waitClosed(t *testing.T) CloseReason {
	t.Helper()
	select {
	case r := <-o.closedCh:
		return r
	case <-time.After(clientTimeout):
		t.Fatal("no connection closed")
		return 0
	}
}

// testHandler serves FETCH, STORE, AUTH and COMPILE for tests; every other
// verb is answered unknown-opcode, as a surface that does not serve it.
type testHandler struct {
	secret  string
	release chan struct{} // FETCH "slow" waits on it
	entered chan struct{} // FETCH "slow" signals here on arrival
	kept    [][]byte
}

func (h *testHandler) Serve(ctx context.Context, c *Conn, req *Request) Reply {
	switch req.Op() {
	case wire.OpFetch:
		return h.fetch(ctx, req.Fields[0])
	case wire.OpStore:
		if string(req.Fields[0]) == "keep" {
			h.kept = req.Keep()
		}
		return Ok(nil)
	case wire.OpAuth:
		if string(req.Fields[2]) == h.secret {
			c.SetAuthenticated(true)
			return Ok(nil)
		}
		return Refuse(wire.Refusal{Code: wire.CodeUnauthenticated, Message: "authentication failed"})
	case wire.OpCompile:
		for range 2 {
			if err := c.Progress(); err != nil {
				return Refuse(wire.Refusal{Code: wire.CodeWorkerSpawnFailed, Message: err.Error()})
			}
		}
		return Ok(req.Fields[0])
	}
	return RefuseCode(wire.CodeUnknownOpcode)
}

func (h *testHandler) fetch(ctx context.Context, key []byte) Reply {
	k := string(key)
	switch {
	case k == "miss":
		return Miss()
	case k == "slow":
		h.entered <- struct{}{}
		select {
		case <-h.release:
			return Ok([]byte("slow done"))
		case <-ctx.Done():
			return RefuseCode(wire.CodeRequestDeadlineExceeded)
		}
	case k == "panic":
		panic("handler bug")
	case k == "progress-outside":
		return Ok(nil)
	case strings.HasPrefix(k, "big:"):
		n, _ := strconv.Atoi(k[4:])
		return Ok(bytes.Repeat([]byte{'v'}, n))
	}
	return Ok(key) // echo
}

// startServer runs a server on 127.0.0.1 and stops it when the test ends.
func startServer(t testing.TB, cfg Config) (*Server, string) {
	t.Helper()
	if cfg.Handler == nil {
		cfg.Handler = &testHandler{secret: "sesame", release: make(chan struct{}), entered: make(chan struct{}, 1)}
	}
	srv, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	t.Cleanup(func() {
		srv.Close()
		if err := <-served; !errors.Is(err, ErrServerClosed) {
			t.Errorf("Serve returned %v, want ErrServerClosed", err)
		}
	})
	return srv, l.Addr().String()
}

// client is a raw 0xFC test client.
type client struct {
	t    testing.TB
	conn net.Conn
	br   *bufio.Reader
}

func dial(t testing.TB, addr string) *client {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return &client{t: t, conn: conn, br: bufioReader(conn)}
}

func bufioReader(conn net.Conn) *bufio.Reader { return bufio.NewReaderSize(conn, 64<<10) }

func (c *client) send(frames ...[]byte) {
	c.t.Helper()
	if _, err := c.conn.Write(bytes.Join(frames, nil)); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

// reply reads one terminal reply to op.
func (c *client) reply(op wire.Op) (wire.Status, []byte, error) {
	c.conn.SetReadDeadline(time.Now().Add(clientTimeout))
	return wire.ReadReply(c.br, op, 1<<30, nil)
}

// expectOk reads a reply to op and requires Ok with payload want.
func (c *client) expectOk(op wire.Op, want string) {
	c.t.Helper()
	status, payload, err := c.reply(op)
	if err != nil || status != wire.StatusOk || string(payload) != want {
		c.t.Fatalf("%s reply: %s %q %v; want Ok %q", op, status, payload, err, want)
	}
}

// expectRefusal reads a reply to op and requires an Error with code.
func (c *client) expectRefusal(op wire.Op, code wire.Code) wire.Refusal {
	c.t.Helper()
	_, _, err := c.reply(op)
	var r wire.Refusal
	if !errors.As(err, &r) || r.Code != code {
		c.t.Fatalf("%s reply: %v; want refusal %s", op, err, code)
	}
	return r
}

// expectClosed requires the server to end the connection with nothing
// more to read.
func (c *client) expectClosed() {
	c.t.Helper()
	c.conn.SetReadDeadline(time.Now().Add(clientTimeout))
	n, err := io.Copy(io.Discard, c.br)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		c.t.Fatal("connection still open")
	}
	if n != 0 {
		c.t.Fatalf("read %d unexpected bytes before close", n)
	}
}

func fetch(key string) []byte { return wire.AppendRequest(nil, wire.OpFetch, []byte(key)) }

func auth(secret string) []byte {
	return wire.AppendRequest(nil, wire.OpAuth, []byte{1}, nil, []byte(secret))
}

// rawFrame builds a request frame with an arbitrary header.
func rawFrame(version uint8, op wire.Op, declared uint32, payload []byte) []byte {
	h := wire.RequestHeader{Magic: wire.Magic, Version: version, Op: op, PayloadLen: declared}
	return append(wire.AppendRequestHeader(nil, h), payload...)
}
