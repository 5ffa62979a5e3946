// Package aeadbox keeps the server's secrets at rest: the plaintext tokens it presents to
// server-dialed workers and the caches' narinfo signing keys are stored sealed with
// AES-256-GCM under one random key that lives in the data directory (keys/secret.key, mode
// 0600), never in the database. A database dump alone therefore reveals no usable secret.
//
// Every sealed value is bound to a purpose (the GCM additional data), so a sealed token
// cannot be replayed where a signing key is expected.
//
// The name says the construction: an AEAD (AES-256-GCM, a random 96-bit nonce per value) from
// the standard library. It is not NaCl's secretbox (XSalsa20-Poly1305) nor libsodium's sealed
// box (public-key), and a value sealed here opens with neither.
package aeadbox
