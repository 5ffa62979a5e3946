package httpfront

import (
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"
)

// listener is the public listener with its caps: Accept hands out only connections the
// table admitted, answering the others 503 and closing them.
type listener struct {
	net.Listener
	log      *slog.Logger
	counters *Counters
	now      func() time.Time

	mu    sync.Mutex
	table *table
}

// conn is an admitted connection; closing it frees its place.
type conn struct {
	net.Conn
	l     *listener
	entry *entry
	once  sync.Once
}

// NetConn is the connection under the cap's wrapper (for socket options).
func (c *conn) NetConn() net.Conn { return c.Conn }

func (c *conn) Close() error {
	c.once.Do(func() {
		c.l.mu.Lock()
		c.l.table.remove(c.entry)
		c.l.mu.Unlock()
	})
	return c.Conn.Close()
}

// Accept returns the next admitted connection.
func (l *listener) Accept() (net.Conn, error) {
	for {
		nc, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if c := l.admit(nc); c != nil {
			return c, nil
		}
	}
}

// admit asks the table about nc: it is wrapped, or refused with 503 and closed. An idle
// connection evicted to make room is closed here.
func (l *listener) admit(nc net.Conn) *conn {
	addr := remoteIP(nc)
	l.mu.Lock()
	e, evicted, v := l.table.admit(addr, l.now())
	var c *conn
	if v == admitted {
		c = &conn{Conn: nc, l: l, entry: e}
		e.conn = nc
	}
	l.mu.Unlock()
	if evicted != nil {
		l.counters.Evicted.Add(1)
		_ = evicted.conn.Close() // its server goroutine sees the read fail and ends
	}
	switch v {
	case refusedPerAddr:
		l.counters.RefusedPerAddr.Add(1)
		l.refuse(nc, addr, "per-address")
	case refusedTotal:
		l.counters.RefusedTotal.Add(1)
		l.refuse(nc, addr, "total")
	default:
		l.counters.Accepted.Add(1)
	}
	return c
}

// refusal is the whole answer to a refused connection.
const refusal = "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\nContent-Length: 22\r\n" +
	"Connection: close\r\nRetry-After: 1\r\n\r\ntoo many connections\r\n"

// refuse answers 503 without reading the request (a short write that fits the socket
// buffer; the deadline only guards a peer that never reads) and closes.
func (l *listener) refuse(nc net.Conn, addr, which string) {
	l.log.Warn("refused a connection: connection cap reached", "remote", addr, "cap", which)
	_ = nc.SetWriteDeadline(l.now().Add(100 * time.Millisecond))
	_, _ = nc.Write([]byte(refusal))
	_ = nc.Close()
}

// connState follows net/http's view of each connection (http.Server.ConnState).
func (l *listener) connState(nc net.Conn, st http.ConnState) {
	c, ok := nc.(*conn)
	if !ok {
		return
	}
	var p phase
	switch st {
	case http.StateActive:
		p = phaseActive
	case http.StateIdle:
		p = phaseIdle
	case http.StateHijacked:
		p = phaseHijacked
	default:
		return // New is set at admission; Closed is Close's business
	}
	l.mu.Lock()
	l.table.set(c.entry, p, l.now())
	l.mu.Unlock()
}

func remoteIP(c net.Conn) string {
	if ta, ok := c.RemoteAddr().(*net.TCPAddr); ok {
		return ta.IP.String()
	}
	host, _, err := net.SplitHostPort(c.RemoteAddr().String())
	if err != nil {
		return c.RemoteAddr().String()
	}
	return host
}
