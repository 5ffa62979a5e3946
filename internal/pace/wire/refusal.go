package wire

import "fmt"

// Refusal is the payload of an Error reply: a code and its message
// (pace-wire §1.6). It implements error so that a client can return it as the
// outcome of an exchange and a server can return it from a verb.
type Refusal struct {
	Code    Code
	Message string
}

// Refuse builds a Refusal with a formatted message; an empty format yields
// the code's default sentence.
func Refuse(code Code, format string, args ...any) Refusal {
	if format == "" {
		return Refusal{Code: code, Message: code.DefaultMessage()}
	}
	return Refusal{Code: code, Message: fmt.Sprintf(format, args...)}
}

func (r Refusal) Error() string {
	if r.Message == "" {
		return "refused " + r.Code.String()
	}
	return "refused " + r.Code.String() + ": " + r.Message
}

// Recognised reports whether the code is one this build knows and that is
// still sent. A client treats anything else as an "unrecognised refusal":
// not retriable, compile locally (pace-wire §1.11).
func (r Refusal) Recognised() bool { return r.Code.Live() }

// Retriable reports whether the same request may succeed later; an
// unrecognised refusal never is.
func (r Refusal) Retriable() bool { return r.Recognised() && r.Code.Retriable() }

// AppendErrorPayload appends `[u8 code][message]`, substituting the code's
// default sentence for an empty message. It panics on a retired or
// unassigned code: those are never sent, and only a programming error
// could name one.
func AppendErrorPayload(dst []byte, r Refusal) []byte {
	if !r.Code.Live() {
		panic(fmt.Sprintf("wire: refusing to send non-live error code 0x%02x", uint8(r.Code)))
	}
	msg := r.Message
	if msg == "" {
		msg = r.Code.DefaultMessage()
	}
	dst = append(dst, byte(r.Code))
	return append(dst, msg...)
}

// ErrorPayloadLen is the length AppendErrorPayload will produce for r.
func ErrorPayloadLen(r Refusal) int {
	if r.Message == "" {
		return 1 + len(r.Code.DefaultMessage())
	}
	return 1 + len(r.Message)
}

// ParseErrorPayload decodes an Error reply's payload. An empty payload is
// malformed. An unknown or retired code is returned as is (see
// Recognised); an empty message is filled with the default sentence.
func ParseErrorPayload(payload []byte) (Refusal, error) {
	if len(payload) == 0 {
		return Refusal{}, malformed("empty error payload")
	}
	r := Refusal{Code: Code(payload[0]), Message: string(payload[1:])}
	if r.Message == "" {
		r.Message = r.Code.DefaultMessage()
	}
	return r, nil
}
