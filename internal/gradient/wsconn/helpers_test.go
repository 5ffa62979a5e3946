package wsconn

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/buildfleet/buildfleet/internal/gradient/wire"
)

// testCtx bounds a test's socket calls so a bug fails the test instead of hanging it.
func testCtx(t testing.TB) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// wsURL turns an httptest URL into the /proto WebSocket URL.
func wsURL(srv *httptest.Server) string {
	return "ws" + strings.TrimPrefix(srv.URL, "http") + "/proto"
}

// serveWorkers runs a server whose /proto accepts workers with AcceptWorker and hands each
// ServerConn to the test.
func serveWorkers(t testing.TB, opts Options) (string, <-chan *ServerConn) {
	t.Helper()
	accepted := make(chan *ServerConn, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := AcceptWorker(w, r, opts)
		if err != nil {
			t.Errorf("AcceptWorker: %v", err)
			return
		}
		accepted <- c
	}))
	t.Cleanup(srv.Close)
	return wsURL(srv), accepted
}

// serveFunc runs a discoverable worker whose /proto accepts the server with AcceptServer.
func serveFunc(t *testing.T, handle func(*WorkerConn)) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := AcceptServer(w, r, Options{})
		if err != nil {
			t.Errorf("AcceptServer: %v", err)
			return
		}
		handle(c)
	}))
	t.Cleanup(srv.Close)
	return wsURL(srv)
}

// serveRaw runs a server whose /proto hands a plain library conn to the test: a foreign peer.
func serveRaw(t *testing.T) (string, <-chan *rawPeer) {
	t.Helper()
	accepted := make(chan *rawPeer, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := websocket.Accept(w, r, nil)
		if err != nil {
			t.Errorf("Accept: %v", err)
			return
		}
		accepted <- newRawPeer(t, ws)
	}))
	t.Cleanup(srv.Close)
	return wsURL(srv), accepted
}

// acceptOne waits for the next accepted connection and aborts it at cleanup.
func acceptOne[C interface{ Abort() }](t testing.TB, ch <-chan C) C {
	t.Helper()
	select {
	case c := <-ch:
		t.Cleanup(c.Abort)
		return c
	case <-testCtx(t).Done():
		t.Fatal("no connection accepted")
		panic("unreachable")
	}
}

func dialServer(t testing.TB, url string, opts DialOptions) *WorkerConn {
	t.Helper()
	c, err := DialServer(testCtx(t), url, opts)
	if err != nil {
		t.Fatalf("DialServer: %v", err)
	}
	t.Cleanup(c.Abort)
	return c
}

// rawPeer is a plain coder/websocket connection standing in for a foreign or older peer.
type rawPeer struct {
	t  *testing.T
	ws *websocket.Conn
}

func newRawPeer(t *testing.T, ws *websocket.Conn) *rawPeer {
	ws.SetReadLimit(-1)
	return &rawPeer{t: t, ws: ws}
}

func (p *rawPeer) Abort() { _ = p.ws.CloseNow() }

func rawDial(t *testing.T, url string) *rawPeer {
	t.Helper()
	ws, _, err := websocket.Dial(testCtx(t), url, nil)
	if err != nil {
		t.Fatalf("raw dial: %v", err)
	}
	p := newRawPeer(t, ws)
	t.Cleanup(p.Abort)
	return p
}

func (p *rawPeer) write(frame []byte) {
	p.t.Helper()
	if err := p.ws.Write(testCtx(p.t), websocket.MessageBinary, frame); err != nil {
		p.t.Fatalf("raw write: %v", err)
	}
}

// writeAsync writes frames from another goroutine, for frames bigger than the socket buffers
// that the other side reads only later. The channel yields the first error (or nil).
func (p *rawPeer) writeAsync(frames ...[]byte) <-chan error {
	done := make(chan error, 1)
	go func() {
		for _, f := range frames {
			if err := p.ws.Write(context.Background(), websocket.MessageBinary, f); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	return done
}

func (p *rawPeer) writeMessage(m wire.Message) {
	p.t.Helper()
	frame, err := wire.Encode(m, 30)
	if err != nil {
		p.t.Fatalf("encode %T: %v", m, err)
	}
	p.write(frame)
}

// reading starts reading in the background: the library answers a close frame only while
// someone reads, and our side's Close waits for that answer.
func (p *rawPeer) reading() *rawReads {
	r := &rawReads{frames: make(chan []byte, 1024), done: make(chan struct{})}
	go func() {
		defer close(r.done)
		for {
			_, frame, err := p.ws.Read(context.Background())
			if err != nil {
				r.err = err
				close(r.frames)
				return
			}
			r.frames <- frame
		}
	}()
	return r
}

type rawReads struct {
	frames chan []byte
	done   chan struct{}
	err    error // valid after done
}

// next returns the next binary frame the peer received.
func (r *rawReads) next(t *testing.T) []byte {
	t.Helper()
	select {
	case f, ok := <-r.frames:
		if !ok {
			<-r.done
			t.Fatalf("connection ended while a frame was expected: %v", r.err)
		}
		return f
	case <-testCtx(t).Done():
		t.Fatal("no frame received")
		return nil
	}
}

// closed waits for the connection to end and returns the close frame the peer got.
func (r *rawReads) closed(t *testing.T) websocket.CloseError {
	t.Helper()
	for {
		select {
		case _, ok := <-r.frames:
			if ok {
				continue
			}
			<-r.done
			var ce websocket.CloseError
			if !errors.As(r.err, &ce) {
				t.Fatalf("connection ended without a close frame: %v", r.err)
			}
			return ce
		case <-testCtx(t).Done():
			t.Fatal("connection was not closed")
		}
	}
}

// agreeBoth runs agreement on both ends concurrently (each sends first, then reads).
func agreeBoth(t testing.TB, a, b interface {
	Agree(context.Context) (uint16, error)
}) {
	t.Helper()
	errs := make(chan error, 2)
	for _, c := range []interface {
		Agree(context.Context) (uint16, error)
	}{a, b} {
		go func() {
			_, err := c.Agree(testCtx(t))
			errs <- err
		}()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatalf("agreement: %v", err)
		}
	}
}

// logRecorder is a slog.Handler keeping every record, for asserting warn-level logs.
type logRecorder struct {
	mu      sync.Mutex
	records []slog.Record
}

func (h *logRecorder) Enabled(context.Context, slog.Level) bool { return true }
func (h *logRecorder) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *logRecorder) WithGroup(string) slog.Handler            { return h }
func (h *logRecorder) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.records = append(h.records, r.Clone())
	return nil
}

// warned reports whether a warn record carried attribute key with value want.
func (h *logRecorder) warned(key, want string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, r := range h.records {
		found := false
		r.Attrs(func(a slog.Attr) bool {
			found = found || (a.Key == key && a.Value.String() == want)
			return !found
		})
		if r.Level == slog.LevelWarn && found {
			return true
		}
	}
	return false
}

// narPush is a bulk frame whose Offset numbers it, so receivers can check order.
func narPush(seq uint64, size int) *wire.NarPush {
	data := make([]byte, size)
	for i := range data {
		data[i] = byte(uint64(i) + seq)
	}
	return &wire.NarPush{JobID: "job", StorePath: "/nix/store/aaaa-x", Data: data, Offset: seq}
}
