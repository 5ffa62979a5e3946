// Package wsconn is gradient's socket layer over github.com/coder/websocket
// (gradient-protocol §1): one /proto or /cache/{cache}/proto WebSocket, typed for its role,
// carrying wire-encoded messages.
//
// A Conn[S, R] sends S and receives R. WorkerConn sends ClientMessage and receives
// ServerMessage (the worker, whether it dialed or was dialed); ServerConn is the reverse. The
// server dials a worker with DialWorker and accepts one with AcceptWorker; the worker dials the
// server with DialServer and, when discoverable, accepts it with AcceptServer.
//
// Version agreement (gradient-protocol §1.2) runs lazily on the first Send, Read or Agree:
// each side writes its 8-byte GRAD frame, then reads the peer's. A failure closes the socket
// with 1002 and the exact reason gradient-protocol §1.2 gives, logs it at warn level and is
// returned as a *wire.AgreementError (use errors.As) so a server that dialed a worker can keep
// the reason as its offline reason.
//
// Reads (gradient-protocol §1.3): every WebSocket message is one binary frame. Until
// EnterSession a text message closes the socket with 1003 at once; afterwards text messages
// are read, counted against the cap and dropped. Until EnterSession every frame is capped at
// 64 KiB and a bigger one closes the socket with 1002 before any decoding; afterwards the cap
// is 8 MiB (or Options.SessionReadLimit: 2 MiB on cache sessions) and a bigger frame closes
// with 1009, the code gradient-protocol §1.4 recommends. The library's own limit is disabled
// so that these codes, not its 1009, are what the peer sees. On an accepted socket the
// inbound frame headers are followed as they arrive (framescan.go), so a header declaring
// more than the cap closes the socket at once, not after its payload or a deadline.
//
// Frame ownership: []byte fields of a message returned by Read alias its frame (the codec is
// zero-copy). Read also returns a release func: the frame stays valid until release is
// called, and release hands a large frame buffer back for reuse. Calling it is optional (an
// unreleased frame is garbage collected) but must happen after the last use of the message.
// Frames under 32 KiB are copied out of the reader's scratch buffer, so their release is a
// no-op.
//
// Writes (gradient-protocol §1.5): Send encodes on the caller's goroutine (encode errors reach
// the caller, and encoding large chunks runs in parallel with the single writer) and queues
// the frame on the lane wire.Lane picks: control (256 entries) or bulk (16). One writer
// goroutine always drains control first, never mixes lanes in a batch, takes at most 32
// messages per batch, stops filling a bulk batch once it holds 256 KiB, writes the batch with
// one flush and looks at control again. Send returns once the frame is queued; a Send that
// cannot queue within the stall timeout (30 s) fails with ErrStalled. Writer is safe for
// concurrent use: share the pointer (it is the one writer every goroutine shares,
// gradient-protocol §1.5).
//
// Closing: Close drains every queued frame and then closes with 1000; Reject queues a Reject
// message and closes with 1008 and "<code> <reason>" (gradient-server §10.4); Abort drops the
// queues and closes the TCP connection at once. A context passed to Read, Send or Agree bounds
// that call; the library closes the whole socket when such a context ends mid-operation, so
// read loops should pass the session's lifetime context (and HandshakeContext during the
// handshake).
package wsconn
