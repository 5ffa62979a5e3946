package tier

import (
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
)

// proxyMode is what a testProxy does with the connections it accepts.
type proxyMode int32

const (
	forward proxyMode = iota // relay to the target
	drop                     // close at once: an upstream that drops
	stall                    // read and never answer: an upstream that stalls
)

// testProxy stands between the tier and a pace-kv (or nothing) on real TCP, so a test can
// count the tier's connections and turn the upstream into one that drops or stalls.
type testProxy struct {
	ln       net.Listener
	target   string
	mode     atomic.Int32
	accepted atomic.Int64

	mu    sync.Mutex
	conns map[net.Conn]struct{}
	wg    sync.WaitGroup
}

func startProxy(t testing.TB, target string, mode proxyMode) *testProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &testProxy{ln: ln, target: target, conns: map[net.Conn]struct{}{}}
	p.mode.Store(int32(mode))
	p.wg.Go(p.accept)
	t.Cleanup(func() {
		ln.Close()
		p.cutAll()
		p.wg.Wait()
	})
	return p
}

func (p *testProxy) addr() string        { return p.ln.Addr().String() }
func (p *testProxy) setMode(m proxyMode) { p.mode.Store(int32(m)) }
func (p *testProxy) connections() int64  { return p.accepted.Load() }

func (p *testProxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.accepted.Add(1)
		switch proxyMode(p.mode.Load()) {
		case drop:
			c.Close()
		case stall:
			p.track(c)
			p.wg.Go(func() { io.Copy(io.Discard, c) })
		default:
			p.wg.Go(func() { p.relay(c) })
		}
	}
}

func (p *testProxy) relay(c net.Conn) {
	up, err := net.Dial("tcp", p.target)
	if err != nil {
		c.Close()
		return
	}
	p.track(c)
	p.track(up)
	done := make(chan struct{}, 2)
	go func() { io.Copy(up, c); done <- struct{}{} }()
	go func() { io.Copy(c, up); done <- struct{}{} }()
	<-done
	c.Close()
	up.Close()
	<-done
}

func (p *testProxy) track(c net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.conns[c] = struct{}{}
}

// cutAll closes every connection open through the proxy, as an upstream's idle timeout or a
// restart would.
func (p *testProxy) cutAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		c.Close()
	}
	p.conns = map[net.Conn]struct{}{}
}
