package hostiletest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"
)

// IdleKeepAlive opens a connection to addr from laddr ("" for any), makes one keep-alive
// GET of path, reads the whole answer and leaves the connection open and idle, as an HTTP
// client's pool does. The caller closes it.
func IdleKeepAlive(ctx context.Context, addr, laddr, path string) (net.Conn, error) {
	c, err := dialFrom(ctx, addr, laddr)
	if err != nil {
		return nil, err
	}
	if dl, ok := ctx.Deadline(); ok {
		_ = c.SetDeadline(dl)
	}
	if _, err := fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\n\r\n", path, addr); err != nil {
		c.Close()
		return nil, fmt.Errorf("hostiletest: request: %w", err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("hostiletest: response: %w", err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	_ = c.SetDeadline(time.Time{})
	return c, nil
}

// WaitClosed waits up to within for the server to close c, reading and dropping whatever
// arrives, and reports how long it took; false if c was still open at the end.
func WaitClosed(c net.Conn, within time.Duration) (time.Duration, bool) {
	start := time.Now()
	_ = c.SetReadDeadline(start.Add(within))
	buf := make([]byte, 512)
	for {
		_, err := c.Read(buf)
		if err == nil {
			continue
		}
		if isTimeout(err) {
			return time.Since(start), false
		}
		return time.Since(start), true // EOF or reset: the server closed it
	}
}

// SlowHeader opens a connection from laddr and sends an unfinished request head one byte
// every interval, as a slowloris client does, until the server closes the connection or
// ctx ends. It reports how long the server held the connection; ok is false when ctx ended
// first.
func SlowHeader(ctx context.Context, addr, laddr string, every time.Duration) (held time.Duration, ok bool, err error) {
	c, err := dialFrom(ctx, addr, laddr)
	if err != nil {
		return 0, false, err
	}
	defer c.Close()
	start := time.Now()
	head := []byte("GET /healthz HTTP/1.1\r\nHost: " + addr + "\r\nX-Slow: ")
	t := time.NewTicker(every)
	defer t.Stop()
	for i := 0; ; i++ {
		b := byte('a')
		if i < len(head) {
			b = head[i]
		}
		_ = c.SetWriteDeadline(time.Now().Add(every + time.Second))
		if _, err := c.Write([]byte{b}); err != nil {
			return time.Since(start), true, nil
		}
		select {
		case <-ctx.Done():
			return time.Since(start), false, nil
		case <-t.C:
		}
		if closedNow(c) {
			return time.Since(start), true, nil
		}
	}
}

// closedNow reports whether the server has closed c, without waiting.
func closedNow(c net.Conn) bool {
	_ = c.SetReadDeadline(time.Now().Add(time.Millisecond))
	var b [256]byte
	_, err := c.Read(b[:])
	_ = c.SetReadDeadline(time.Time{})
	return err != nil && !isTimeout(err) || errors.Is(err, io.EOF)
}
