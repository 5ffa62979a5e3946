package kv

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/kvclient"
	"github.com/buildfleet/buildfleet/internal/pace/promexport/promexporttest"
	"github.com/buildfleet/buildfleet/internal/pace/value"
	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// start runs a pace-kv on loopback ports and stops it when the test ends.
func start(t *testing.T, cfg Config) *Server {
	t.Helper()
	cfg.Listen, cfg.MetricsListen = "127.0.0.1:0", "127.0.0.1:0"
	if cfg.MaxMemory == 0 && cfg.Storage == "" {
		cfg.MaxMemory = 64 << 20
	}
	srv, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve() }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
		<-done
	})
	return srv
}

func opts(srv *Server) kvclient.Options {
	return kvclient.Options{Addr: srv.Addr().String(), Timeout: 10 * time.Second}
}

// compileValue builds a stored value with an object and a depfile region.
func compileValue(t testing.TB, object string, regions ...value.Region) []byte {
	t.Helper()
	b, err := value.Encode(value.Value{Object: []byte(object), Regions: regions})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// rawConn speaks frames by hand, for refusals a well-behaved client never provokes.
type rawConn struct {
	t  *testing.T
	nc net.Conn
	br *bufio.Reader
}

func dialRaw(t *testing.T, srv *Server) *rawConn {
	t.Helper()
	nc, err := net.Dial("tcp", srv.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	nc.SetDeadline(time.Now().Add(10 * time.Second))
	return &rawConn{t: t, nc: nc, br: bufio.NewReader(nc)}
}

func (r *rawConn) send(op wire.Op, fields ...[]byte) {
	r.t.Helper()
	if _, err := r.nc.Write(wire.AppendRequest(nil, op, fields...)); err != nil {
		r.t.Fatal(err)
	}
}

// reply reads one reply frame: status and payload.
func (r *rawConn) reply() (wire.Status, []byte) {
	r.t.Helper()
	var scratch [wire.ReplyHeaderLen]byte
	h, err := wire.ReadReplyHeader(r.br, &scratch)
	if err != nil {
		r.t.Fatalf("reading reply: %v", err)
	}
	p := make([]byte, h.PayloadLen)
	if _, err := io.ReadFull(r.br, p); err != nil {
		r.t.Fatal(err)
	}
	return h.Status, p
}

// expectRefusal reads one reply and checks it is an Error with code.
func (r *rawConn) expectRefusal(code wire.Code) wire.Refusal {
	r.t.Helper()
	st, p := r.reply()
	if st != wire.StatusError {
		r.t.Fatalf("status %s, want Error %s", st, code)
	}
	ref, err := wire.ParseErrorPayload(p)
	if err != nil || ref.Code != code {
		r.t.Fatalf("refusal %v (%v), want %s", ref, err, code)
	}
	return ref
}

// metric scrapes /metrics and returns the value of one series, with exactly the labels given
// as name, value pairs.
func metric(t *testing.T, srv *Server, series string, labels ...string) float64 {
	t.Helper()
	return promexporttest.Value(t, "http://"+srv.MetricsAddr().String()+"/metrics", series, labels...)
}

func httpGet(url string) (int, error) {
	resp, err := http.Get(url)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}
