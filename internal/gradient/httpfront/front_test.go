package httpfront_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/hostiletest"
	"github.com/buildfleet/buildfleet/internal/gradient/httpfront"
)

// serve runs a Front on a loopback port with h and limits; it returns the address.
func serve(t *testing.T, h http.Handler, l httpfront.Limits) (string, *httpfront.Front) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := httpfront.New(ln, httpfront.Config{Handler: h, Limits: l})
	go f.Serve()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		f.Shutdown(ctx)
	})
	return ln.Addr().String(), f
}

var ok = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok\n") })

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// get makes one request on a fresh connection from laddr and returns the status.
func get(t *testing.T, addr, laddr string) int {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(laddr)}}
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DialContext: d.DialContext, DisableKeepAlives: true}}
	resp, err := client.Get("http://" + addr + "/")
	if err != nil {
		t.Fatalf("GET from %s: %v", laddr, err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// Idle keep-alive connections are closed after the idle timeout (before this they stayed
// open for good).
func TestIdleKeepAlivesAreClosed(t *testing.T) {
	addr, _ := serve(t, ok, httpfront.Limits{IdleTimeout: 300 * time.Millisecond})
	var conns []net.Conn
	for range 5 {
		c, err := hostiletest.IdleKeepAlive(testCtx(t), addr, "", "/")
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		conns = append(conns, c)
	}
	for _, c := range conns {
		held, closed := hostiletest.WaitClosed(c, 3*time.Second)
		if !closed || held > 2*time.Second {
			t.Fatalf("an idle connection was held %v (closed %v), want about 300ms", held, closed)
		}
	}
}

// A request head dripped one byte at a time is cut off at the header timeout.
func TestSlowHeadersAreCut(t *testing.T) {
	addr, _ := serve(t, ok, httpfront.Limits{HeaderTimeout: 300 * time.Millisecond})
	held, closed, err := hostiletest.SlowHeader(testCtx(t), addr, "", 50*time.Millisecond)
	if err != nil || !closed || held > 2*time.Second {
		t.Fatalf("slow head held %v (closed %v, %v), want about 300ms", held, closed, err)
	}
}

// One address holding its cap of idle connections evicts one of its own to open another; one holding
// its cap of busy ones is refused 503; another address is served throughout.
func TestPerAddressCap(t *testing.T) {
	release := make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/block" {
			<-release
		}
		io.WriteString(w, "ok\n")
	})
	addr, f := serve(t, h, httpfront.Limits{MaxConnsPerAddr: 4, MaxConns: 100})
	defer close(release)
	var idle []net.Conn
	for range 5 {
		c, err := hostiletest.IdleKeepAlive(testCtx(t), addr, "127.0.0.2", "/")
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		idle = append(idle, c)
	}
	waitFor(t, func() bool { return f.Counters().Evicted.Load() == 1 })
	closed := 0
	for _, c := range idle[:4] { // which one went idle first is net/http's timing
		if _, ok := hostiletest.WaitClosed(c, 200*time.Millisecond); ok {
			closed++
		}
	}
	if _, ok := hostiletest.WaitClosed(idle[4], 200*time.Millisecond); closed != 1 || ok {
		t.Fatalf("%d of the first four idle connections were closed (and the newest %v), want one of them", closed, ok)
	}
	for range 4 {
		c := blockOn(t, addr, "127.0.0.3")
		defer c.Close()
	}
	waitFor(t, func() bool { return f.Counters().Accepted.Load() == 9 })
	if status := rawStatus(t, addr, "127.0.0.3"); status != 503 {
		t.Fatalf("a fifth busy connection from one address got %d, want 503", status)
	}
	if got := get(t, addr, "127.0.0.1"); got != 200 {
		t.Fatalf("another address got %d", got)
	}
	if f.Counters().RefusedPerAddr.Load() != 1 {
		t.Fatalf("refusals per address %d, want 1", f.Counters().RefusedPerAddr.Load())
	}
}

// At the total cap an idle connection makes room for a new client.
func TestTotalCapEvictsIdle(t *testing.T) {
	addr, f := serve(t, ok, httpfront.Limits{MaxConns: 8, MaxConnsPerAddr: 8})
	for i := range 8 {
		c, err := hostiletest.IdleKeepAlive(testCtx(t), addr, fmt.Sprintf("127.0.0.%d", 2+i%3), "/")
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
	}
	// The last connection's turn to idle is net/http's timing; the first seven are idle.
	if got := get(t, addr, "127.0.0.1"); got != 200 || f.Counters().Evicted.Load() != 1 {
		t.Fatalf("a new client got %d with %d evicted; want 200 and one idle connection closed", got, f.Counters().Evicted.Load())
	}
}

// A request body that stalls is cut at the body timeout; one read in full lifts the
// deadline, so a long answer streams to its end.
func TestBodyDeadline(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.ReadAll(r.Body); err != nil {
			http.Error(w, "body: "+err.Error(), http.StatusBadRequest)
			return
		}
		for range 6 { // 600 ms of answer, twice the body timeout
			io.WriteString(w, "chunk\n")
			http.NewResponseController(w).Flush()
			time.Sleep(100 * time.Millisecond)
		}
	})
	addr, _ := serve(t, h, httpfront.Limits{BodyTimeout: 300 * time.Millisecond})

	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n0123456789")
	start := time.Now()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil || resp.StatusCode != http.StatusBadRequest || time.Since(start) > 2*time.Second {
		t.Fatalf("a stalled body: %v after %v (%v), want 400 at the timeout", resp, time.Since(start), err)
	}

	resp, err = http.Post("http://"+addr+"/", "text/plain", strings.NewReader("whole body"))
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || strings.Count(string(body), "chunk") != 6 {
		t.Fatalf("the long answer after a whole body was cut: %q, %v", body, err)
	}
}

// blockOn opens a connection from laddr whose request the handler holds.
func blockOn(t *testing.T, addr, laddr string) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(laddr)}}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(c, "GET /block HTTP/1.1\r\nHost: x\r\n\r\n")
	return c
}

// rawStatus opens a connection from laddr, sends a request and returns the status.
func rawStatus(t *testing.T, addr, laddr string) int {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(laddr)}}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("no answer: %v", err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition never held")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
