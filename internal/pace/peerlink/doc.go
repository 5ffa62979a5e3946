// Package peerlink is the consensus link of pace-consensus §7.3 as a pure
// state machine: the handshake every consensus TCP connection runs before
// any Raft message, and the tagged frames that follow it. It does no I/O:
// bytes, roster answers and randomness (an io.Reader) go in; frames,
// verdicts, sessions and errors come out. Package peerconn puts it on
// sockets with the 5 s bound.
//
// Every frame starts with the same 10-byte header:
//
//	magic "PRFT" (4) ‖ version 5 (1) ‖ kind (1) ‖ u32 BE payload length (4)
//
// The handshake, in wire order (payloads in the 0xFC field grammar, every
// field length-prefixed):
//
//	acceptor → challenge [nonceA 32][ephA 32]           sent before reading anything
//	dialler  → proof     [dialler][target][nonceD 32][ephD 32][direction 1][sigD 64]
//	           sigD = Sign(dialler's key, pace-raft-proof-v1,
//	                       version, nonceA, ephA, dialler, target, nonceD, ephD, direction)
//	acceptor → verdict   [acceptor][outcome 1][sigA 64]   or a close without one
//	           sigA = Sign(acceptor's key, pace-raft-verdict-v1,
//	                       every field sigD covers, sigD, acceptor, outcome)
//
// The acceptor looks up the key its roster records for the claimed id and
// verifies sigD under it before it believes any claim: no key recorded, or
// a signature that fails, closes the link without a verdict, because an
// answer to a proof nobody could check would be signed for a stranger.
// Only then are the claims judged, in this order: the claimed id is the
// acceptor's own (own-id: two machines hold one key), the dialler's key is
// revoked (revoked), the dialler meant another member (wrong-target),
// otherwise accepted. The verdict names the acceptor, and the dialler
// verifies it under the key its own roster records for that id before it
// sends anything; so a stale address answers, signed, as the member it
// really is, and an impostor at a member's address is caught.
//
// The direction the dialler asks for is VoterToVoter (the dialler's Raft
// messages only; the acceptor answers on its own dialled link) or
// LearnerToVoter (both ways on this one connection: a learner opens no
// port).
//
// Session keys are those of nodeproof.DeriveSessionKeys under the label
// SessionLabel: HKDF-SHA256 over X25519(ephD, ephA), salt nonceD ‖ nonceA,
// info fieldlist[label, ephD, ephA, dialler, acceptor, key direction]; one
// key per direction (dialler→acceptor is 1, acceptor→dialler is 2). Every
// message frame is followed by a 32-byte tag, nodeproof.Sealer's
// HMAC-SHA256 over the direction's running sequence number (u64 BE, from 0),
// the header and the payload. A replayed, reordered, dropped, reflected or
// spliced frame fails its tag.
//
// Both ends ask the roster again on every message, sent or received, so a
// key revoked mid-link ends the link at its next message; and a message
// frame may be handed to a SenderCheck that closes the link when the Raft
// message inside names a sender other than the proven member.
package peerlink
