package loghub

import (
	"errors"
	"strconv"
	"unicode/utf8"
)

// MaxOffset bounds the offsets an event id may carry (a log is far smaller).
const MaxOffset = 1 << 62

// maxAttemptID bounds the attempt part of an event id; attempts are UUIDs.
const maxAttemptID = 64

// ErrEventID refuses an id that is neither "<offset>" nor "<attempt>:<offset>".
var ErrEventID = errors.New("loghub: malformed event id")

// EventID names the point just past offset bytes of attempt's log.
func EventID(attempt string, offset int64) string {
	return attempt + ":" + strconv.FormatInt(offset, 10)
}

// ParseEventID reads a Last-Event-ID: "<attempt>:<offset>", or a bare "<offset>" (attempt
// ""). The attempt is 1 to 64 letters, digits and dashes; the offset decimal digits without
// a sign, at most MaxOffset.
func ParseEventID(s string) (attempt string, offset int64, err error) {
	num := s
	if i := lastColon(s); i >= 0 {
		attempt, num = s[:i], s[i+1:]
		if !validAttempt(attempt) {
			return "", 0, ErrEventID
		}
	}
	if num == "" || len(num) > 19 {
		return "", 0, ErrEventID
	}
	for i := 0; i < len(num); i++ {
		if num[i] < '0' || num[i] > '9' {
			return "", 0, ErrEventID
		}
	}
	v, err := strconv.ParseInt(num, 10, 64)
	if err != nil || v > MaxOffset {
		return "", 0, ErrEventID
	}
	return attempt, v, nil
}

func lastColon(s string) int {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == ':' {
			return i
		}
	}
	return -1
}

func validAttempt(s string) bool {
	if s == "" || len(s) > maxAttemptID {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '-') {
			return false
		}
	}
	return true
}

// Encoder turns one attempt's log into SSE events, each carrying the bytes since the last
// one and the id of where it ends. It holds back an incomplete UTF-8 character and a
// trailing carriage return until the next bytes (or Flush), so a character is never split
// between events and "\r\n" split between chunks stays one line break.
type Encoder struct {
	attempt string
	offset  int64 // bytes sent in events
	tail    []byte
}

// NewEncoder starts at offset of attempt's log.
func NewEncoder(attempt string, offset int64) *Encoder {
	return &Encoder{attempt: attempt, offset: offset}
}

// Attempt is the attempt being encoded.
func (e *Encoder) Attempt() string { return e.attempt }

// Sent is the offset the last event ended at: what a client resumes from.
func (e *Encoder) Sent() int64 { return e.offset }

// Received is the offset just past every byte given, sent or held back.
func (e *Encoder) Received() int64 { return e.offset + int64(len(e.tail)) }

// Data appends the event for data, the bytes following those given before, to dst.
func (e *Encoder) Data(dst, data []byte) []byte {
	if len(e.tail) > 0 {
		data = append(e.tail, data...)
		e.tail = nil
	}
	cut := len(data) - heldBack(data)
	if cut < len(data) {
		e.tail = append([]byte(nil), data[cut:]...)
	}
	return e.emit(dst, data[:cut])
}

// Flush appends an event for whatever is held back: the attempt's log ended.
func (e *Encoder) Flush(dst []byte) []byte {
	t := e.tail
	e.tail = nil
	return e.emit(dst, t)
}

func (e *Encoder) emit(dst, data []byte) []byte {
	if len(data) == 0 {
		return dst
	}
	e.offset += int64(len(data))
	return AppendEvent(dst, "", EventID(e.attempt, e.offset), data)
}

// heldBack is how many bytes at the end of b to keep for later: a final "\r", or the start
// of a UTF-8 character that needs more bytes (at most 3).
func heldBack(b []byte) int {
	n := len(b)
	if n == 0 {
		return 0
	}
	if b[n-1] == '\r' {
		return 1
	}
	for k := 1; k <= 3 && k <= n; k++ {
		c := b[n-k]
		if c < 0x80 {
			return 0
		}
		if utf8.RuneStart(c) {
			if need := runeLen(c); need > k {
				return k
			}
			return 0
		}
	}
	return 0
}

// runeLen is the length a UTF-8 sequence starting with c claims (1 for an invalid start).
func runeLen(c byte) int {
	switch {
	case c&0xE0 == 0xC0:
		return 2
	case c&0xF0 == 0xE0:
		return 3
	case c&0xF8 == 0xF0:
		return 4
	}
	return 1
}

// AppendEvent appends one event: its name unless "" (a message), its id unless "", and data
// as data lines. A line break in data, "\n", "\r\n" or "\r", ends a data line, so a client
// reads data back with "\n" for each.
func AppendEvent(dst []byte, name, id string, data []byte) []byte {
	if name != "" {
		dst = append(append(append(dst, "event: "...), name...), '\n')
	}
	if id != "" {
		dst = append(append(append(dst, "id: "...), id...), '\n')
	}
	dst = append(dst, "data: "...)
	for i := 0; i < len(data); i++ {
		switch c := data[i]; c {
		case '\r':
			if i+1 < len(data) && data[i+1] == '\n' {
				i++
			}
			dst = append(dst, "\ndata: "...)
		case '\n':
			dst = append(dst, "\ndata: "...)
		default:
			dst = append(dst, c)
		}
	}
	return append(dst, '\n', '\n')
}

// AppendComment appends a comment line, which clients ignore: a heartbeat.
func AppendComment(dst []byte, text string) []byte {
	return append(append(append(dst, ": "...), text...), '\n')
}
