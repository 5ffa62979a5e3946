// Package sealedconn puts the node proof of package nodeproof on sockets
// (pace-wire §1.15.4, pace-node §8.3).
//
// Client side: Dial (or Client over a connection already open) runs
// NODE-CHALLENGE and PROVE-NODE and returns a Conn whose Do sends a sealed
// 0xFC request and reads its sealed reply — what a node's worker uses to
// REGISTER and HEARTBEAT with its scheduler. A reply whose tag fails ends
// the Conn (counted as pace_node_sealed_frames_refused_total when given
// counters); a refusal is returned as a wire.Refusal and the Conn stays
// usable.
//
// Server side: ServeProof answers the two verbs for a node handler on a
// frameserver connection, installing the sealer when a proof is accepted,
// and CountSealRefusals wraps the listener's frameserver.Observer so a
// connection closed for a bad tag is counted.
package sealedconn
