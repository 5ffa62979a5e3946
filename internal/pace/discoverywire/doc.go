// Package discoverywire is the datagram codec of pace's LAN discovery, wire version 3
// (pace-wire §1.17, pace-node §9.1): beacons, challenges and proofs. It is pure: bytes and
// values in, bytes and values out; signing goes through a Signer, and a cookie is whatever
// 32 bytes the caller minted.
//
// Every datagram starts with a 6-byte header, then its body in the 0xFC field grammar
// (each field a u32 BE length and its bytes):
//
//	magic "PDSC" (4) ‖ version 3 (1) ‖ kind (1)
//	beacon    [summary][pad]                        pad: 136 zero bytes
//	challenge [cookie 32][challengerClusterId][pad] pad: zeros up to the beacon's length
//	proof     [summary][cookie 32][key 32][sig 64]
//	          sig = Ed25519(key, fieldlist[pace-discovery-proof-v1,
//	                        challengerClusterId, cookie, summary, key])
//
// The summary is verbs.FleetSummary's nested record, read by verbs.ParseFleetSummary, and
// the signature covers its bytes exactly as sent. The padding makes every exchange
// symmetric in size: a beacon is exactly as long as the proof its summary makes, and a
// challenge is padded to the beacon it answers, so no reply is larger than the datagram
// that triggered it and a forged source address buys no amplification.
//
// Parse judges the header and the length before it reads or allocates anything: another
// protocol's bytes are ErrNotDiscovery, another version ErrOtherVersion (dropped silently
// by the receiver), everything else that is not exactly one well-formed datagram
// ErrMalformed.
package discoverywire
