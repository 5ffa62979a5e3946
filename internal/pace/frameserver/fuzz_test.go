package frameserver

import (
	"context"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

var (
	fuzzOnce sync.Once
	fuzzSrv  *Server
	fuzzLn   *pipeListener
)

// FuzzConnection feeds arbitrary bytes to a server with small limits (a tight budget, short
// deadlines, a credential required every other request) over in-memory pipes, and requires
// that every connection ends — answered, refused or closed — and leaves nothing charged or
// open behind.
func FuzzConnection(f *testing.F) {
	f.Add(fetch("k"))
	f.Add(append(auth("sesame"), fetch("after auth")...))
	f.Add(rawFrame(1, wire.OpStore, 200<<10, make([]byte, 100<<10)))
	f.Add(rawFrame(1, wire.OpStore, 3<<20, nil))
	f.Add([]byte{wire.Magic, 1})
	f.Add(rawFrame(9, wire.OpFetch, 1, []byte{0}))
	f.Fuzz(func(t *testing.T, in []byte) {
		fuzzOnce.Do(startFuzzServer)
		conn := fuzzLn.dial()
		defer conn.Close()
		go conn.Write(in)
		conn.SetReadDeadline(time.Now().Add(clientTimeout))
		if _, err := io.Copy(io.Discard, conn); err != nil {
			t.Fatalf("the connection did not end: %v", err)
		}
		conn.Close()
		deadline := time.Now().Add(clientTimeout)
		for fuzzSrv.ActiveConns() != 0 || fuzzSrv.InflightPayload() != 0 {
			if time.Now().After(deadline) {
				t.Fatalf("%d connections open, %d bytes charged after the peer left", fuzzSrv.ActiveConns(), fuzzSrv.InflightPayload())
			}
			time.Sleep(time.Millisecond)
		}
	})
}

func startFuzzServer() {
	var mu sync.Mutex
	flip := false
	srv, err := New(Config{Handler: HandlerFunc(fuzzHandler),
		IdleTimeout: 20 * time.Millisecond, FrameTimeout: 20 * time.Millisecond, AuthTimeout: 100 * time.Millisecond,
		PayloadBudget: 1 << 20, BudgetWait: 5 * time.Millisecond, MinFrameRate: 64 << 20,
		CredentialRequired: func() bool { mu.Lock(); defer mu.Unlock(); flip = !flip; return flip }})
	if err != nil {
		panic(err)
	}
	fuzzLn = &pipeListener{conns: make(chan net.Conn)}
	go srv.Serve(fuzzLn)
	fuzzSrv = srv
}

// pipeListener hands the server one end of an in-memory pipe per dial: no ports, so fuzzing
// cannot run the host out of them.
type pipeListener struct{ conns chan net.Conn }

func (l *pipeListener) dial() net.Conn {
	client, server := net.Pipe()
	l.conns <- server
	return client
}

func (l *pipeListener) Accept() (net.Conn, error) { return <-l.conns, nil }
func (l *pipeListener) Close() error              { return nil }
func (l *pipeListener) Addr() net.Addr            { return pipeAddr{} }

type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "pipe" }

// fuzzHandler answers AUTH with "sesame" Ok (and marks the connection), everything else Ok,
// at once: the server's own paths are what is fuzzed.
func fuzzHandler(_ context.Context, c *Conn, req *Request) Reply {
	if req.Op() == wire.OpAuth {
		ok := string(req.Fields[2]) == "sesame"
		c.SetAuthenticated(ok)
		if !ok {
			return RefuseCode(wire.CodeUnauthenticated)
		}
	}
	if req.Info.Statuses.Has(wire.StatusOk) {
		return Ok(nil)
	}
	return RefuseCode(wire.CodeUnknownOpcode)
}
