package frameserver

import "hash"

// Sealer authenticates every frame of a connection in both directions once
// a node proof has agreed keys (pace-wire §1.15.4): each frame's header and
// payload are followed by a wire.SealTagLen-byte tag that payloadLength
// does not count. A handler installs one with Conn.InstallSealer; the
// reply that carries the installation (PROVE-NODE's) is the first sealed
// frame written.
//
// Each call returns the MAC for the next frame in that direction, already
// keyed for it (the implementation owns the running sequence numbers). The
// server writes the frame's header then payload into it; a read frame
// whose tag differs from Sum is closed unanswered.
type Sealer interface {
	NextReadMAC() hash.Hash
	NextWriteMAC() hash.Hash
}
