// Package wire is gradient's versioned binary codec: the Proto encoding of
// gradient-protocol §2.2 (varints, ZigZag, length-prefixed strings and bytes, enums as a
// variant index), every ClientMessage and ServerMessage of protocol 30 with their shared types
// (gradient-protocol §3), the versioning rules of gradient-protocol §2.3 expressed as struct
// tags and enum registries, the schema files that pin each supported version's wire shape, and
// the 8-byte GRAD version frame of gradient-protocol §1.2.
//
// One definition drives everything: the Go types below plus their `proto:"since=N[,default]"`
// tags and the variant registries. From them the package compiles, once per type, an encode
// and decode plan (field offsets, no reflection on the hot path) and the Describe text, so the
// codec and the schema files cannot disagree.
//
// Decoding is zero-copy for `bytes` fields: a decoded message's []byte fields are sub-slices
// of the frame it was decoded from, so the frame must not be modified while the message is in
// use. Strings are copied. Empty sequences and byte strings decode as nil.
//
// The package is pure: no sockets, files or clocks. The WebSocket side lives in wsconn.
package wire
