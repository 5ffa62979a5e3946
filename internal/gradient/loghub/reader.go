package loghub

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strings"
)

// ErrTooLong refuses a line or an event past the Reader's bound.
var ErrTooLong = errors.New("loghub: event stream line or event too long")

// Event is one dispatched SSE event. Name "" is a message; ID is the last id seen, as a
// client's Last-Event-ID would be.
type Event struct {
	Name, ID, Data string
}

// Reader decodes a server-sent-events stream, as the HTML standard parses one, with every
// line and every event's data bounded by max bytes so a stream cannot make it allocate more.
type Reader struct {
	br      *bufio.Reader
	max     int
	lastID  string
	started bool
	afterCR bool // the last line ended with "\r": a "\n" next belongs to that break
	line    []byte
}

// NewReader reads events from r; max bounds a line and an event's data.
func NewReader(r io.Reader, max int) *Reader {
	return &Reader{br: bufio.NewReaderSize(r, 64<<10), max: max}
}

// LastID is the id a reconnect sends as Last-Event-ID.
func (r *Reader) LastID() string { return r.lastID }

// Next returns the next event; io.EOF at the end of the stream (an event cut short by the
// end is dropped, as the standard says).
func (r *Reader) Next() (Event, error) {
	var name string
	var data bytes.Buffer
	hasData := false
	for {
		line, err := r.readLine()
		if err != nil {
			return Event{}, err
		}
		if len(line) == 0 {
			if !hasData {
				name = ""
				continue
			}
			return Event{Name: name, ID: r.lastID, Data: strings.TrimSuffix(data.String(), "\n")}, nil
		}
		field, value := splitField(line)
		switch field {
		case "event":
			name = value
		case "data":
			if data.Len()+len(value)+1 > r.max {
				return Event{}, ErrTooLong
			}
			data.WriteString(value)
			data.WriteByte('\n')
			hasData = true
		case "id":
			if !strings.ContainsRune(value, 0) {
				r.lastID = value
			}
		}
	}
}

// splitField splits "field: value" (one space after the colon dropped); a line starting
// with a colon is a comment, answered with an empty field.
func splitField(line []byte) (string, string) {
	i := bytes.IndexByte(line, ':')
	if i < 0 {
		return string(line), ""
	}
	value := line[i+1:]
	if len(value) > 0 && value[0] == ' ' {
		value = value[1:]
	}
	return string(line[:i]), string(value)
}

// readLine returns the next line without its break ("\r\n", "\n" or "\r"), dropping a
// byte-order mark at the start of the stream.
func (r *Reader) readLine() ([]byte, error) {
	r.line = r.line[:0]
	for {
		c, err := r.br.ReadByte()
		if err != nil {
			return nil, err // a last line without its break is cut short: dropped
		}
		afterCR := r.afterCR
		r.afterCR = false
		switch {
		case c == '\n' && afterCR && len(r.line) == 0:
			continue // the second half of "\r\n"; not waited for, a stream may pause after "\r"
		case c == '\n':
			return r.line, nil
		case c == '\r':
			r.afterCR = true
			return r.line, nil
		}
		if len(r.line) >= r.max {
			return nil, ErrTooLong
		}
		r.line = append(r.line, c)
		if !r.started {
			r.started = true
			if c == 0xEF {
				if rest, err := r.br.Peek(2); err == nil && rest[0] == 0xBB && rest[1] == 0xBF {
					r.br.Discard(2)
					r.line = r.line[:0]
				}
			}
		}
	}
}
