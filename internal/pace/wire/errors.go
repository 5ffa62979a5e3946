package wire

import (
	"errors"
	"fmt"
)

// Sentinel errors callers branch on. Each maps onto one wire code (see
// CodeOf); the corrupt-envelope error is a malformed frame that callers may
// count apart (pace-wire §1.9).
var (
	// ErrMalformedFrame: fields do not fill the payload exactly, a width is
	// wrong, or an envelope does not parse (code malformed-frame).
	ErrMalformedFrame = errors.New("malformed frame")
	// ErrCorruptEnvelope: an envelope parsed but its bytes did not expand to
	// exactly the declared size. It is also an ErrMalformedFrame.
	ErrCorruptEnvelope = fmt.Errorf("%w: envelope bytes do not expand to the declared size", ErrMalformedFrame)
	// ErrPayloadTooLarge: a declared length or expansion exceeds the
	// receiver's ceiling (code payload-too-large).
	ErrPayloadTooLarge = errors.New("payload too large")
	// ErrUnsupportedCodec: the envelope's codec is unknown or not accepted
	// here (code unsupported-codec).
	ErrUnsupportedCodec = errors.New("unsupported codec")

	// ErrInvalidUTF8 refuses kept text that is not valid UTF-8.
	ErrInvalidUTF8 = fmt.Errorf("%w: text is not valid UTF-8", ErrMalformedFrame)
	// ErrFieldTooLong refuses a field longer than its local bound.
	ErrFieldTooLong = fmt.Errorf("%w: field longer than allowed", ErrMalformedFrame)
	// ErrTooManyEntries refuses a list or count beyond its local bound.
	ErrTooManyEntries = fmt.Errorf("%w: more entries than allowed", ErrMalformedFrame)

	// ErrShortHeader: fewer bytes than a header needs.
	ErrShortHeader = errors.New("short header")
	// ErrBadMagic: a request header whose first byte is not Magic.
	ErrBadMagic = errors.New("not a 0xFC frame")
	// ErrUnknownStatus: a reply status byte outside pace-wire §1.5.
	ErrUnknownStatus = errors.New("unknown reply status")
	// ErrIllegalStatus: a known status the asked op never answers with.
	ErrIllegalStatus = errors.New("reply status not legal for this op")
	// ErrReplyTooLarge: a reply declares more than the client accepts for
	// the op (pace-wire §1.10 reply ceilings).
	ErrReplyTooLarge = errors.New("reply larger than the op's reply ceiling")
)

// CodeOf maps an error from this package to the wire code a server answers
// with. ok is false for errors that have no wire code (I/O, headers).
func CodeOf(err error) (code Code, ok bool) {
	switch {
	case errors.Is(err, ErrMalformedFrame):
		return CodeMalformedFrame, true
	case errors.Is(err, ErrPayloadTooLarge):
		return CodePayloadTooLarge, true
	case errors.Is(err, ErrUnsupportedCodec):
		return CodeUnsupportedCodec, true
	}
	var r Refusal
	if errors.As(err, &r) {
		return r.Code, true
	}
	return 0, false
}

// malformed wraps ErrMalformedFrame with a detail.
func malformed(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrMalformedFrame}, args...)...)
}
