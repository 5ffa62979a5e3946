// Package peerconn puts the consensus link of package peerlink on sockets
// (pace-consensus §7.3): Endpoint.Accept runs the accepting end on a
// connection a consensus listener accepted, Endpoint.Dial (or DialTCP,
// which opens the connection too) the dialling end on a connection to a
// member's consensus endpoint, each within 5 s, and
// both return a Conn that reads and writes whole Raft messages, each
// tagged, with the roster asked again for every one.
//
// Each refusal is counted once, on the end that sees it, under the
// pace_raft_peer_* name of pace-consensus §7.3.6, and logged: before the
// other end is proven at most once a minute and naming only its address,
// except a revoked key, which is named whole; after, naming both member
// ids. No log line carries a nonce, an ephemeral key, a signature or a
// session key.
//
// The caller owns the listener, the dialling and the choice of which link
// to keep: a consensus transport accepts on --listen-raft, learns from
// Conn.Peer and Conn.Direction whom it proved, dials each member by id at
// its recorded endpoint, and reads and writes raftpb messages with
// ReadMessage and WriteMessage until Err says why the link ended.
package peerconn
