// Package nodeproof is the node proof of the node port and the frame
// sealing that follows it (pace-wire §1.15.4, pace-wire §5.2,
// pace-wire §5.5; pace-node §8.3): a node dialling a scheduler proves its
// identity key, both ends agree per-direction keys, and from then on every
// frame in both directions carries a 32-byte HMAC-SHA256 tag.
//
// The exchange, as frames on the node port:
//
//	client → NODE-CHALLENGE [nonceC 32][ephC 32]
//	server ← Ok [serverId][serverKey 32][nonceS 32][ephS 32][sigS 64]
//	         sigS = Sign(serverKey, pace-node-challenge-v1, nonceC, ephC, serverId, serverKey, nonceS, ephS)
//	client → PROVE-NODE [clientId][clientKey 32][sigC 64]
//	         sigC = Sign(clientKey, pace-node-proof-v1, nonceC, ephC, serverId, serverKey, nonceS, ephS, sigS, clientId, clientKey)
//	server ← Ok (empty), the first sealed frame
//
// The server checks the proof's signature under the presented key before
// it consults its roster, so a forged proof learns nothing about the
// roster; then roster-not-yet-applied, node-key-revoked (the connection is
// marked: a revoked key outranks every admission route) and
// node-key-unknown. A challenge is spent by one proof whatever its
// outcome; asking again redraws it; one accepted proof per connection.
//
// Session keys (pace-wire §5.5): for each direction d (ClientToServer = 1,
// ServerToClient = 2)
//
//	key_d = HKDF-SHA256(ikm  = X25519(eph, peer eph),
//	                    salt = nonceC ‖ nonceS,
//	                    info = fieldlist[label, ephC, ephS, clientId, serverId, u8 d], 32 bytes)
//	tag   = HMAC-SHA256(key_d, u64 BE seq ‖ header ‖ payload)
//
// with seq counting the frames of that direction from 0. The info is the
// wire field grammar (each part length-prefixed), so no two transcripts
// share an info string. The label is a parameter (SealLabel here) so the
// consensus handshake of pace-consensus §7.3, which has the same shape, can derive its
// own keys with Ephemeral, DeriveSessionKeys and Sealer.
//
// The package is pure: no sockets and no clocks, and every random byte
// comes from the io.Reader it is given. Server and Session are the
// scheduler's side (a node handler keeps one Session per connection and
// asks Session.Proven on every request, which re-reads the roster, so a
// revocation stops admitting at the connection's next message); Client and
// ClientHandshake are the dialling node's side. Package sealedconn puts
// both on sockets.
package nodeproof
