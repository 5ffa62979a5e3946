// Package identity is a pace node's Ed25519 identity (pace-node §7.2, pace-node §8.2,
// pace-node §10.2; pace-wire §1.15): the key and the node id kept in the state
// directory, the 43-character key text operators see, domain-separated signatures, and
// machine tickets.
//
// State directory files:
//
//	node-key   mode 0600, three lines of text:
//	             pace-node-key v1
//	             private-seed <43 chars: unpadded base64url of the 32-byte Ed25519 seed>
//	             public-key <43 chars: the public half, which must match the seed>
//	node-id    the node id and an optional newline
//
// Only an absent file is minted. A file that exists but cannot be used (a
// symlink, not a regular file, owned by an account other than this one or
// root, node-key open to group or other at all, node-id writable by them,
// unreadable, truncated, in another format, halves that disagree) refuses
// the start with a sentence naming the file and the remedy, and is never
// replaced. The directory must not be writable by group or other ("chmod
// go-w <dir>"). Load holds a flock on the directory itself while it reads
// and mints, so two starts at once agree on one identity. New files are
// written to a temporary file whose protection is read back first, synced,
// hard-linked into place (which never replaces a file), and the directory
// is synced.
//
// Every signature is over wire.AppendLabelledMessage(label, fields...) with
// one of wire's construction labels, so a signature made for one purpose
// never verifies as another. The private key is never printed: Key redacts
// itself in fmt and log/slog.
//
// Machine tickets (pace-node §8.2, pace-wire §1.15.2) are minted here and verified
// purely: time, the roster and the spent set are passed in.
package identity
