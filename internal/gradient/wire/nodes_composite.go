package wire

import (
	"reflect"
	"strings"
	"unsafe"
)

// optNode encodes Option[T]: a tag byte, then T when present.
type optNode struct {
	elem     node
	validOff uintptr // offset of Option.Valid; Option.Value is at offset 0
}

func (n *optNode) encode(e *encoder, p unsafe.Pointer) error {
	if !*(*bool)(unsafe.Add(p, n.validOff)) {
		e.buf = append(e.buf, 0)
		return nil
	}
	e.buf = append(e.buf, 1)
	return n.elem.encode(e, p)
}

// decode relies on p being zeroed memory (every decode target is freshly allocated), so None
// leaves Value as the zero value without writing it.
func (n *optNode) decode(d *decoder, p unsafe.Pointer) error {
	tag, err := d.byte()
	switch {
	case err != nil:
		return err
	case tag == 0:
		return nil
	case tag != 1:
		return InvalidBoolError{Byte: tag}
	}
	*(*bool)(unsafe.Add(p, n.validOff)) = true
	return n.elem.decode(d, p)
}

func (n *optNode) describe(b *strings.Builder, v uint16) {
	b.WriteString("opt<")
	n.elem.describe(b, v)
	b.WriteByte('>')
}

func (n *optNode) span() versionSpan { return n.elem.span() }
func (n *optNode) minSize() int      { return 1 }

// sliceHeader is the memory layout of every Go slice.
type sliceHeader struct {
	data     unsafe.Pointer
	len, cap int
}

// seqNode encodes []T: a varint count, then the items.
type seqNode struct {
	elem     node
	elemSize uintptr
	typ      reflect.Type // []T, for allocation
	minItem  int
}

func (n *seqNode) encode(e *encoder, p unsafe.Pointer) error {
	h := (*sliceHeader)(p)
	e.uvarint(uint64(h.len))
	for i := range h.len {
		if err := n.elem.encode(e, unsafe.Add(h.data, uintptr(i)*n.elemSize)); err != nil {
			return err
		}
	}
	return nil
}

// decode checks the count against the remaining bytes before allocating the backing array.
func (n *seqNode) decode(d *decoder, p unsafe.Pointer) error {
	count, err := d.count(n.minItem)
	if err != nil || count == 0 {
		return err
	}
	s := reflect.NewAt(n.typ, p).Elem()
	s.Grow(count)
	s.SetLen(count)
	data := (*sliceHeader)(p).data
	for i := range count {
		if err := n.elem.decode(d, unsafe.Add(data, uintptr(i)*n.elemSize)); err != nil {
			return err
		}
	}
	return nil
}

func (n *seqNode) describe(b *strings.Builder, v uint16) {
	b.WriteString("seq<")
	n.elem.describe(b, v)
	b.WriteByte('>')
}

func (n *seqNode) span() versionSpan { return n.elem.span() }
func (n *seqNode) minSize() int      { return 1 }

// field is one struct field of a plan with its gradient-protocol §2.3 annotation.
type field struct {
	name   string
	offset uintptr
	node   node
	since  uint16
	// optional marks `default`: left out below since and decoded as the zero value.
	optional bool
}

func (f *field) present(version uint16) bool { return !f.optional || version >= f.since }

// structNode encodes a struct (or a tuple) as its fields in declaration order.
type structNode struct {
	fields  []field
	tuple   bool
	bounds  versionSpan
	minimum int
}

func (n *structNode) encode(e *encoder, p unsafe.Pointer) error {
	for i := range n.fields {
		f := &n.fields[i]
		if !f.present(e.version) {
			continue
		}
		if err := f.node.encode(e, unsafe.Add(p, f.offset)); err != nil {
			return err
		}
	}
	return nil
}

func (n *structNode) decode(d *decoder, p unsafe.Pointer) error {
	for i := range n.fields {
		f := &n.fields[i]
		if !f.present(d.version) {
			continue
		}
		if err := f.node.decode(d, unsafe.Add(p, f.offset)); err != nil {
			return err
		}
	}
	return nil
}

func (n *structNode) describe(b *strings.Builder, v uint16) {
	open, closing := byte('{'), byte('}')
	if n.tuple {
		open, closing = '(', ')'
	}
	b.WriteByte(open)
	first := true
	for i := range n.fields {
		f := &n.fields[i]
		if !f.present(v) {
			continue
		}
		if !first {
			b.WriteByte(',')
		}
		first = false
		f.node.describe(b, v)
	}
	b.WriteByte(closing)
}

func (n *structNode) span() versionSpan { return n.bounds }
func (n *structNode) minSize() int      { return n.minimum }

// structSpan applies gradient-protocol §2.3 to a struct's fields: a required field raises
// OLDEST to its since (and to its type's OLDEST); a default field raises OLDEST only when its
// type is newer than the field itself; every field raises NEWEST to its since and its type's
// NEWEST.
func structSpan(fields []field) versionSpan {
	var s versionSpan
	for _, f := range fields {
		inner := f.node.span()
		if f.optional {
			s.oldest = max(s.oldest, floorAbove(inner.oldest, f.since))
		} else {
			s.oldest = max(s.oldest, f.since, inner.oldest)
		}
		s.newest = max(s.newest, f.since, inner.newest)
	}
	s.newest = max(s.newest, s.oldest)
	return s
}

// floorAbove is needed when it is above presentSince, else 0: a type newer than the place
// that holds it still raises OLDEST.
func floorAbove(needed, presentSince uint16) uint16 {
	if needed > presentSince {
		return needed
	}
	return 0
}
