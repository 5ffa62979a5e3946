// Package value is the stored compile-value of pace (pace-wire §2): the
// framing of an object blob plus tagged text regions, the path canonicalization that lets one
// stored copy serve every checkout location, and the direct-mode manifest.
//
// Layout (pace-wire §2.1), all integers big-endian:
//
//	[u8 generation][u32 objectLen][object][u32 regionCount]
//	regionCount × ([u8 grammar][u32 textLen][text])
//
// with no trailing bytes. The object is stored and served verbatim; only text regions are ever
// rewritten, and only in the spans their grammar identifies as paths (pace-wire §2.3).
//
// The package is pure: no I/O, no clocks. Decode returns sub-slices of its input, so a decoded
// Value aliases the bytes it came from.
package value
