package wire

import (
	"fmt"
	"strconv"
)

// DecodeError wraps every decode failure with the message type being decoded and the byte
// offset where decoding stopped. Err is one of the typed errors below; inspect it with
// errors.As (for example errors.As(err, new(UnknownVariantError))).
type DecodeError struct {
	Message string // "ClientMessage" or "ServerMessage"
	Offset  int    // where decoding stopped: the bytes read when the failure was found
	Err     error
}

func (e *DecodeError) Error() string {
	return fmt.Sprintf("decode %s at byte %d: %v", e.Message, e.Offset, e.Err)
}

func (e *DecodeError) Unwrap() error { return e.Err }

// TruncatedError: the frame ended inside a value, or a declared length or count is larger than
// the bytes left in the frame (so a hostile count is refused before anything is allocated).
type TruncatedError struct{}

func (TruncatedError) Error() string { return "frame ended early" }

// TrailingBytesError: bytes were left after the top-level value.
type TrailingBytesError struct{ N int }

func (e TrailingBytesError) Error() string {
	return strconv.Itoa(e.N) + " bytes left after the message"
}

// VarintOverflowError: a varint is longer than 64 bits (more than 10 bytes, or a 10th byte
// other than 0 or 1).
type VarintOverflowError struct{}

func (VarintOverflowError) Error() string { return "varint longer than 64 bits" }

// NonCanonicalVarintError: a varint carries a redundant trailing zero group. Upstream encoders
// never produce one; refusing it keeps decoding injective, so every frame that decodes
// re-encodes to the same bytes.
type NonCanonicalVarintError struct{}

func (NonCanonicalVarintError) Error() string { return "varint has redundant trailing zero bytes" }

// OutOfRangeError: a varint does not fit its target type (Type is "u16" or "u32").
type OutOfRangeError struct{ Type string }

func (e OutOfRangeError) Error() string { return "value out of range for " + e.Type }

// InvalidBoolError: a bool or an option tag byte other than 0 or 1.
type InvalidBoolError struct{ Byte byte }

func (e InvalidBoolError) Error() string {
	return "invalid bool byte " + strconv.Itoa(int(e.Byte))
}

// InvalidUTF8Error: a string is not valid UTF-8.
type InvalidUTF8Error struct{}

func (InvalidUTF8Error) Error() string { return "invalid UTF-8" }

// UnknownVariantError: an enum index that does not exist, or exists only above Version.
type UnknownVariantError struct {
	Type    string
	Tag     uint64
	Version uint16
}

func (e UnknownVariantError) Error() string {
	return fmt.Sprintf("unknown variant %d of %s at protocol %d", e.Tag, e.Type, e.Version)
}

// EncodeError: a value cannot be encoded for the agreed version. When Since is above Version
// the value (an enum variant) is newer than the peer; otherwise Reason says what is malformed
// (a nil enum, an unknown enum value, a string that is not UTF-8).
type EncodeError struct {
	Type    string
	Since   uint16
	Version uint16
	Reason  string
}

func (e *EncodeError) Error() string {
	if e.Reason != "" {
		return "encode " + e.Type + ": " + e.Reason
	}
	return fmt.Sprintf("%s exists since protocol %d, the peer speaks %d", e.Type, e.Since, e.Version)
}
