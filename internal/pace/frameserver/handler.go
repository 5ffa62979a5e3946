package frameserver

import (
	"context"
	"io"

	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// Handler runs the verbs of one surface. Serve is called on the
// connection's goroutine, one request at a time, only for requests that
// passed the receiver order (known opcode, within its cap, credential
// present where required) and split into exactly the op's arity. It
// answers everything else itself: verbs the surface does not serve
// (unknown-opcode, dispatch-not-permitted, ...), admission, gates.
//
// The returned Reply must have a terminal status (Miss, Ok or Error).
type Handler interface {
	Serve(ctx context.Context, c *Conn, req *Request) Reply
}

// HandlerFunc adapts a function to Handler.
type HandlerFunc func(ctx context.Context, c *Conn, req *Request) Reply

// Serve calls f.
func (f HandlerFunc) Serve(ctx context.Context, c *Conn, req *Request) Reply { return f(ctx, c, req) }

// Request is one admitted request.
type Request struct {
	Header wire.RequestHeader
	Info   wire.OpInfo // the op's row of the opcode table
	// Fields are the payload split with the op's exact arity. They alias a
	// buffer the server reuses once Serve returns: copy what you keep, or
	// call Keep.
	Fields [][]byte

	kept bool
}

// Op is the request's opcode.
func (r *Request) Op() wire.Op { return r.Header.Op }

// PayloadLen is the declared payload length.
func (r *Request) PayloadLen() int { return int(r.Header.PayloadLen) }

// Keep hands the payload buffer to the handler: Fields stay valid after
// Serve returns and the server allocates a fresh buffer next time. Large
// payloads (a STORE value) are already read into an exactly-sized buffer,
// so keeping one costs nothing.
func (r *Request) Keep() [][]byte {
	r.kept = true
	return r.Fields
}

// Reply is a handler's answer. The payload is Payload followed by BodyLen
// bytes read from Body, streamed without being held in memory (a stored
// blob, a file section). Release, if set, is called once the reply has
// been written or abandoned, so a handler can return buffers or close
// files.
type Reply struct {
	Status  wire.Status
	Payload []byte
	Body    io.Reader
	BodyLen uint32
	Release func()
	// Close ends the connection after this reply.
	Close bool
}

// Ok is an Ok reply with payload.
func Ok(payload []byte) Reply { return Reply{Status: wire.StatusOk, Payload: payload} }

// Miss is an empty Miss reply.
func Miss() Reply { return Reply{Status: wire.StatusMiss} }

// OkBody is an Ok reply streaming n bytes of body; release runs after it
// is written (it may be nil). An *os.File positioned at the first byte to
// send goes out with sendfile on an unsealed TCP connection; other readers
// are copied through a buffer.
func OkBody(body io.Reader, n uint32, release func()) Reply {
	return Reply{Status: wire.StatusOk, Body: body, BodyLen: n, Release: release}
}

// Refuse is an Error reply; an empty message takes the code's default.
func Refuse(r wire.Refusal) Reply {
	return Reply{Status: wire.StatusError, Payload: wire.AppendErrorPayload(nil, r)}
}

// RefuseCode is an Error reply with the code's default sentence.
func RefuseCode(code wire.Code) Reply { return Refuse(wire.Refusal{Code: code}) }
