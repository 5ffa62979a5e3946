package wsconn

import (
	"cmp"
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"sync"
	"syscall"
	"time"

	"github.com/coder/websocket"
)

// DialOptions configure DialServer and DialWorker.
type DialOptions struct {
	Options
	// Header is sent with the upgrade request (a private cache session sends
	// "Authorization: GRAD<key>").
	Header http.Header
	// TLSConfig is used for wss:// URLs; nil means the system roots.
	TLSConfig *tls.Config
	// ConnectTimeout bounds TCP connect, TLS and the HTTP upgrade. Zero means ConnectTimeout.
	ConnectTimeout time.Duration
	// UserTimeout is TCP_USER_TIMEOUT on the dialed socket. Zero means TCPUserTimeout.
	UserTimeout time.Duration
}

// DialServer is the worker dialing the server (/proto, or /cache/{cache}/proto for a cache
// session): Nagle off, TCP_USER_TIMEOUT, TCP keepalive, and the connect given up after 10 s.
// The handshake that follows is bounded separately: see HandshakeContext.
func DialServer(ctx context.Context, url string, opts DialOptions) (*WorkerConn, error) {
	ws, bc, header, err := dial(ctx, url, opts)
	if err != nil {
		return nil, err
	}
	c := newWorkerConn(ws, bc, opts.Options)
	c.peerHeader = header
	return c, nil
}

// DialWorker is the server dialing a discoverable worker at its registered URL, with the
// same socket options as DialServer.
func DialWorker(ctx context.Context, url string, opts DialOptions) (*ServerConn, error) {
	ws, bc, header, err := dial(ctx, url, opts)
	if err != nil {
		return nil, err
	}
	c := newServerConn(ws, bc, opts.Options)
	c.peerHeader = header
	return c, nil
}

func dial(ctx context.Context, url string, opts DialOptions) (*websocket.Conn, *batchConn, http.Header, error) {
	connectTimeout := cmp.Or(opts.ConnectTimeout, ConnectTimeout)
	ctx, cancel := context.WithTimeout(ctx, connectTimeout)
	defer cancel()

	var mu sync.Mutex
	var dialed *batchConn
	tcp := newDialer(connectTimeout, cmp.Or(opts.UserTimeout, TCPUserTimeout))
	transport := &http.Transport{
		Proxy: http.ProxyFromEnvironment,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := tcp.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			tuneTCP(c)
			bc := newBatchConn(c) // below TLS, so TLS records of one batch leave together
			mu.Lock()
			dialed = bc
			mu.Unlock()
			return bc, nil
		},
		TLSClientConfig:     opts.TLSConfig,
		TLSHandshakeTimeout: connectTimeout,
	}
	ws, resp, err := websocket.Dial(ctx, url, &websocket.DialOptions{
		HTTPClient:      &http.Client{Transport: transport},
		HTTPHeader:      opts.Header,
		CompressionMode: websocket.CompressionDisabled, // chunks are zstd already
	})
	if err != nil {
		return nil, nil, nil, fmt.Errorf("wsconn: dial %s: %w", url, err)
	}
	mu.Lock()
	defer mu.Unlock()
	return ws, dialed, resp.Header, nil
}

// newDialer sets the socket options of gradient-protocol §1.1 before connect.
func newDialer(connectTimeout, userTimeout time.Duration) *net.Dialer {
	return &net.Dialer{
		Timeout:         connectTimeout,
		KeepAliveConfig: net.KeepAliveConfig{Enable: true},
		Control: func(_, _ string, raw syscall.RawConn) error {
			var optErr error
			if err := raw.Control(func(fd uintptr) { optErr = setDialSocketOptions(fd, userTimeout) }); err != nil {
				return fmt.Errorf("wsconn: socket options: %w", err)
			}
			if optErr != nil {
				return fmt.Errorf("wsconn: socket options: %w", optErr)
			}
			return nil
		},
	}
}

// tuneTCP turns Nagle off on c or the TCP connection under it (a TLS server connection).
func tuneTCP(c net.Conn) {
	for {
		switch t := c.(type) {
		case *net.TCPConn:
			_ = t.SetNoDelay(true) // best effort: a failure leaves Go's default, also on
			return
		case interface{ NetConn() net.Conn }:
			c = t.NetConn()
		default:
			return
		}
	}
}
