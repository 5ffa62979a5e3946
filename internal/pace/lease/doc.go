// Package lease is pace's lease token: the signed capability a scheduler hands
// a client for one dispatched compile, and the checks a worker makes before it
// decompresses anything (pace-node §5.4, pace-node §6.3; pace-wire §1.15.1). It
// also holds the compile-reply signature of pace-wire §1.15.3, the Roster
// interface every verifier of a signed object asks, and the bounded single-use
// set that spends leases (and machine tickets) once.
//
// A token is the unpadded base64url text of fieldlist[packedClaims,
// signature(64)]. The packed claims are a field list of exactly ten fields:
//
//	[u8 1][u64 serial][endpoint][fingerprint][key][u64 expiresAtUnixMs]
//	[clusterId][u64 epoch][signerId][workerKey 32 bytes or empty]
//
// and the signature is Ed25519, by the issuing scheduler's identity key, over
// fieldlist[wire.LabelLease, packedClaims]: the claims are signed as received,
// one field, so a verifier never re-encodes what it checks.
//
// The worker's checks run in the order of pace-node §5.4, and each refusal
// carries its wire code and its own counter (principle P3, pace-node §0):
// decodes, roster holds a voter, a leader heard within 65 minutes, signer a
// live voter whose signature verifies (a revoked signer counted apart), same
// cluster, endpoint equals this worker's advertised one, fingerprint served,
// not past expiry plus five minutes of slack, not already spent here.
//
// The package is pure: time, the roster and the last time a leader was heard
// are inputs; nothing here reads a clock, a file or a socket.
package lease
