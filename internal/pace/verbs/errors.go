package verbs

import (
	"errors"
	"fmt"

	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// Sentinels a receiver branches on to choose its counter: every *Error
// matches exactly one of them.
var (
	// ErrMalformed: a wrong arity or width, text that is not UTF-8, a
	// value out of range, a missing required field, a half-filled pair.
	ErrMalformed = errors.New("malformed body")
	// ErrTooLong: a pace-wire §1.10 bound exceeded (text length or entry
	// count), counted as `…_field_too_long_total`.
	ErrTooLong = errors.New("field exceeds its bound")
)

// Error is a refused body: which verb, which field, why, and the code a
// server answers with. It matches ErrMalformed or ErrTooLong, and
// wire.ErrMalformedFrame.
type Error struct {
	Op      wire.Op
	Field   string    // e.g. "endpoint", "capacity.version", "args[3]"
	Code    wire.Code // malformed-frame, or malformed-registration on REGISTER text
	TooLong bool      // a bound, not a grammar fault
	Detail  string
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s %s: %s", e.Op, e.Field, e.Detail)
}

// Unwrap exposes the kind sentinel and wire.ErrMalformedFrame.
func (e *Error) Unwrap() []error {
	if e.TooLong {
		return []error{ErrTooLong, wire.ErrMalformedFrame}
	}
	return []error{ErrMalformed, wire.ErrMalformedFrame}
}

// Refusal is the Error reply a server sends for e.
func (e *Error) Refusal() wire.Refusal {
	return wire.Refusal{Code: e.Code, Message: e.Field + ": " + e.Detail}
}

// RefusalOf returns the refusal a server answers err with: an *Error's own
// code and message, or what wire.CodeOf says. ok is false for an error no
// code describes.
func RefusalOf(err error) (wire.Refusal, bool) {
	var e *Error
	if errors.As(err, &e) {
		return e.Refusal(), true
	}
	var r wire.Refusal
	if errors.As(err, &r) {
		return r, true
	}
	if code, ok := wire.CodeOf(err); ok {
		return wire.Refusal{Code: code, Message: err.Error()}, true
	}
	return wire.Refusal{}, false
}

// IsTooLong reports whether err refused a body for exceeding a bound.
func IsTooLong(err error) bool { return errors.Is(err, ErrTooLong) }
