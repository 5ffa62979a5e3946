// Package frameserver serves 0xFC connections for pace-kv and pace-node: an
// accept loop with a connection cap, and per connection the receiver order
// of pace-wire §1.7 (wire.Decide), dispatching each
// admitted request to a Handler and writing exactly one terminal reply per
// request, in order.
//
// Per connection it enforces an idle timeout between requests and a stall
// timeout inside a frame (a peer that stops mid-header or mid-payload is
// closed), drains refused payloads without buffering them, and keeps the
// connection usable after an unknown opcode or a malformed frame. Which
// verbs a surface serves is the Handler's business; the server needs only
// the surface's session cap and whether it requires a credential.
//
// Replies are batched: small replies collect in a per-connection buffer
// that is flushed before the server would block reading, so pipelined
// requests are answered with one write, and a large reply goes out as one
// writev of header and payload (or header then sendfile for a streamed
// body). Frames can be sealed (pace-wire §1.15.4) by installing a Sealer on a
// connection.
package frameserver
