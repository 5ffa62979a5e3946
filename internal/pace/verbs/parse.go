package verbs

import (
	"fmt"
	"unicode/utf8"

	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// parser reads one body's fields, keeping the first fault. Every reader
// returns the zero value once a fault is recorded, so a Parse function is
// a straight line of reads followed by one check.
type parser struct {
	op wire.Op
	// textCode answers faults in kept text: malformed-registration on
	// REGISTER (pace-wire §1.4), malformed-frame elsewhere.
	textCode wire.Code
	err      *Error
}

func newParser(op wire.Op) parser {
	return parser{op: op, textCode: wire.CodeMalformedFrame}
}

func (p *parser) failed() bool { return p.err != nil }

func (p *parser) result() error {
	if p.err == nil {
		return nil
	}
	return p.err
}

func (p *parser) fail(field string, code wire.Code, tooLong bool, format string, args ...any) {
	if p.err != nil {
		return
	}
	p.err = &Error{Op: p.op, Field: field, Code: code, TooLong: tooLong, Detail: fmt.Sprintf(format, args...)}
}

func (p *parser) malformed(field, format string, args ...any) {
	p.fail(field, wire.CodeMalformedFrame, false, format, args...)
}

// arity checks a request's top-level field count.
func (p *parser) arity(fields [][]byte, n int) bool {
	if len(fields) != n {
		p.malformed("fields", "%d fields where the verb takes %d", len(fields), n)
	}
	return !p.failed()
}

// split splits an Ok payload into exactly n fields.
func (p *parser) split(payload []byte, n int) [][]byte {
	fields, err := wire.SplitFields(nil, payload, n)
	if err != nil {
		p.malformed("body", "%v", err)
		return nil
	}
	return fields
}

// text reads kept text: at most max bytes of valid UTF-8, possibly empty.
func (p *parser) text(f []byte, field string, max int) string {
	if p.failed() {
		return ""
	}
	if len(f) > max {
		p.fail(field, p.textCode, true, "%d bytes, at most %d", len(f), max)
		return ""
	}
	if !utf8.Valid(f) {
		p.fail(field, p.textCode, false, "not valid UTF-8")
		return ""
	}
	return string(f)
}

// required reads kept text that may not be empty.
func (p *parser) required(f []byte, field string, max int) string {
	if !p.failed() && len(f) == 0 {
		p.malformed(field, "empty")
	}
	return p.text(f, field, max)
}

// raw reads bytes that are not kept as text (paths, arguments): bounded,
// any bytes but NUL, which no path or argument can carry.
func (p *parser) raw(f []byte, field string, max int) string {
	if p.failed() {
		return ""
	}
	if len(f) > max {
		p.fail(field, wire.CodeMalformedFrame, true, "%d bytes, at most %d", len(f), max)
		return ""
	}
	for _, b := range f {
		if b == 0 {
			p.malformed(field, "contains a NUL byte")
			return ""
		}
	}
	return string(f)
}

func (p *parser) u32(f []byte, field string) uint32 {
	if p.failed() {
		return 0
	}
	v, err := wire.U32(f)
	if err != nil {
		p.malformed(field, "%v", err)
	}
	return v
}

func (p *parser) u64(f []byte, field string) uint64 {
	if p.failed() {
		return 0
	}
	v, err := wire.U64(f)
	if err != nil {
		p.malformed(field, "%v", err)
	}
	return v
}

func (p *parser) opt8(f []byte, field string) Opt[uint8] {
	v, present, err := wire.OptU8(f)
	return optOf(p, field, v, present, err)
}

func (p *parser) opt32(f []byte, field string) Opt[uint32] {
	v, present, err := wire.OptU32(f)
	return optOf(p, field, v, present, err)
}

func (p *parser) opt64(f []byte, field string) Opt[uint64] {
	v, present, err := wire.OptU64(f)
	return optOf(p, field, v, present, err)
}

func optOf[T ~uint8 | ~uint32 | ~uint64](p *parser, field string, v T, present bool, err error) Opt[T] {
	if p.failed() {
		return Opt[T]{}
	}
	if err != nil {
		p.malformed(field, "%v", err)
		return Opt[T]{}
	}
	return Opt[T]{Value: v, Present: present}
}

// exact copies a field of exactly len(dst) bytes into dst.
func (p *parser) exact(f []byte, field string, dst []byte) {
	if p.failed() {
		return
	}
	if len(f) != len(dst) {
		p.malformed(field, "%d bytes where %d are required", len(f), len(dst))
		return
	}
	copy(dst, f)
}

// optExact reads a field that is empty or exactly n bytes, copying it.
func (p *parser) optExact(f []byte, field string, n int) []byte {
	if p.failed() || len(f) == 0 {
		return nil
	}
	if len(f) != n {
		p.malformed(field, "%d bytes where %d (or none) are required", len(f), n)
		return nil
	}
	return append([]byte(nil), f...)
}

func (p *parser) codecs(f []byte, field string) wire.CodecList {
	if p.failed() {
		return wire.CodecList{}
	}
	l, err := wire.ParseCodecList(f)
	if err != nil {
		p.fail(field, wire.CodeMalformedFrame, true, "%d codec ids, at most %d", len(f), wire.MaxCodecList)
	}
	return l
}

// record reads a nested record with variable arity.
func (p *parser) record(f []byte, field string, known int) wire.Record {
	if p.failed() {
		return wire.Record{}
	}
	r, err := wire.ReadRecord(f, known)
	if err != nil {
		p.malformed(field, "%v", err)
	}
	return r
}

// list splits a nested list of at most max entries; more is a bound.
func (p *parser) list(f []byte, field string, max int) [][]byte {
	return p.listCoded(f, field, max, wire.CodeMalformedFrame)
}

// listCoded is list answering an entry count beyond max with code.
func (p *parser) listCoded(f []byte, field string, max int, code wire.Code) [][]byte {
	if p.failed() || len(f) == 0 {
		return nil
	}
	n, err := wire.CountFields(f)
	if err != nil {
		p.malformed(field, "%v", err)
		return nil
	}
	if n > max {
		p.fail(field, code, true, "%d entries, at most %d", n, max)
		return nil
	}
	entries, _ := wire.SplitFields(make([][]byte, 0, n), f, n)
	return entries
}

// texts reads a nested list of non-empty kept-text entries.
func (p *parser) texts(f []byte, field string, maxEntries, maxLen int) []string {
	entries := p.listCoded(f, field, maxEntries, p.textCode)
	if len(entries) == 0 {
		return nil
	}
	out := make([]string, len(entries))
	for i, e := range entries {
		out[i] = p.required(e, field, maxLen)
	}
	if p.failed() {
		return nil
	}
	return out
}
