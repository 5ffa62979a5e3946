// Package peertoken mints and checks gradient's secrets: the peer tokens a registration hands
// a worker (gradient-protocol §4.2) and the administration API keys (gradient-protocol §7.1,
// `GRAD<key>`).
//
// Peer tokens are 48 random bytes in standard base64, what `openssl rand -base64 48` prints.
// The server stores an argon2id PHC string of each token; Verify also accepts the legacy
// lowercase SHA-256 hex form, told apart by the leading `$` of a PHC string. Both comparisons
// run in constant time, and a stored PHC string is parsed strictly with its cost parameters
// bounded before anything is computed, so a hostile or corrupt row cannot make the server
// allocate gigabytes or spin for seconds.
//
// API keys are "GRAD" followed by 32 random bytes in unpadded base64url. The server stores
// the SHA-256 hex of the part after "GRAD" and finds a key by that hash; clients send
// `Authorization: GRAD<key>` or, like the upstream client, `Authorization: Bearer GRAD<key>`.
//
// The package is pure: randomness comes in as an io.Reader (crypto/rand.Reader in production).
package peertoken
