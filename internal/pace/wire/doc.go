// Package wire is pace's 0xFC compile-cache protocol: request and reply
// headers, statuses, error codes, the opcode table, the field grammar with
// exact arity and exact integer widths, the codec envelope (identity, LZ4,
// zstd) and the receiver's pre-payload decision, as pace-wire §1 describes
// them.
//
// The package is pure: it parses and builds bytes, and its stream helpers
// work on io.Reader and io.Writer only. Everything a peer declares (a length,
// a count, an expansion size) is checked against the bytes actually present
// and a local cap before anything is allocated for it.
//
// Our wire version sequence starts at 1 (pace-wire §5.1); the layouts are those
// of upstream wire version 15.
package wire
