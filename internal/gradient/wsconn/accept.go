package wsconn

import (
	"bufio"
	"fmt"
	"net"
	"net/http"

	"github.com/coder/websocket"
)

// AcceptWorker upgrades a request on the server's /proto or /cache/{cache}/proto to the
// server side of a session. On failure the library has already answered the request.
func AcceptWorker(w http.ResponseWriter, r *http.Request, opts Options) (*ServerConn, error) {
	ws, bc, err := accept(w, r)
	if err != nil {
		return nil, err
	}
	c := newServerConn(ws, bc, opts)
	c.peerHeader = r.Header.Clone()
	return c, nil
}

// AcceptServer upgrades a request on a discoverable worker's /proto to the worker side of a
// server-dialed session.
func AcceptServer(w http.ResponseWriter, r *http.Request, opts Options) (*WorkerConn, error) {
	ws, bc, err := accept(w, r)
	if err != nil {
		return nil, err
	}
	c := newWorkerConn(ws, bc, opts)
	c.peerHeader = r.Header.Clone()
	return c, nil
}

func accept(w http.ResponseWriter, r *http.Request) (*websocket.Conn, *batchConn, error) {
	hw := &hijackWriter{ResponseWriter: w}
	var rw http.ResponseWriter = w
	if hj, ok := findHijacker(w); ok {
		hw.hj = hj
		rw = hw
	}
	ws, err := websocket.Accept(rw, r, &websocket.AcceptOptions{CompressionMode: websocket.CompressionDisabled})
	if err != nil {
		return nil, nil, fmt.Errorf("wsconn: accept: %w", err)
	}
	return ws, hw.bc, nil
}

// hijackWriter hands the library a batchConn in place of the hijacked connection, with
// Nagle turned off on it.
type hijackWriter struct {
	http.ResponseWriter
	hj http.Hijacker
	bc *batchConn
}

func (h *hijackWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	c, brw, err := h.hj.Hijack()
	if err != nil {
		return nil, nil, err
	}
	tuneTCP(c)
	// net/http flushed the 101 response before handing the buffer over; flushing again only
	// guards against a server that did not.
	if err := brw.Writer.Flush(); err != nil {
		_ = c.Close()
		return nil, nil, fmt.Errorf("flush upgrade response: %w", err)
	}
	h.bc = newBatchConn(c)
	// The library reads what net/http buffered before this connection: its frame headers
	// are scanned first.
	buffered, _ := brw.Reader.Peek(brw.Reader.Buffered())
	h.bc.watchFrames(buffered)
	brw.Writer.Reset(h.bc)
	return h.bc, brw, nil
}

// findHijacker follows Unwrap like http.ResponseController (and the library) do.
func findHijacker(w http.ResponseWriter) (http.Hijacker, bool) {
	for {
		switch t := w.(type) {
		case http.Hijacker:
			return t, true
		case interface{ Unwrap() http.ResponseWriter }:
			w = t.Unwrap()
		default:
			return nil, false
		}
	}
}
