package wire

import (
	"math"
	"strings"
	"unsafe"
)

// node is the compiled plan for one Go type: how to encode it from, and decode it into, the
// memory at p, and how to describe its wire shape at a version. Plans are built once per type
// (see compile.go); the hot path does no reflection.
type node interface {
	encode(e *encoder, p unsafe.Pointer) error
	decode(d *decoder, p unsafe.Pointer) error
	describe(b *strings.Builder, version uint16)
	// span is the type's OLDEST..NEWEST per gradient-protocol §2.3 (primitives: 0..0).
	span() versionSpan
	// minSize is a lower bound on the encoded size at every version, used to refuse hostile
	// sequence counts before allocating.
	minSize() int
}

// versionSpan is a type's OLDEST and NEWEST (gradient-protocol §2.3).
type versionSpan struct{ oldest, newest uint16 }

// primitive supplies span and minSize for leaf nodes.
type primitive struct{ min int }

func (primitive) span() versionSpan { return versionSpan{} }
func (p primitive) minSize() int    { return p.min }

type boolNode struct{ primitive }

func (boolNode) encode(e *encoder, p unsafe.Pointer) error { e.bool(*(*bool)(p)); return nil }
func (boolNode) decode(d *decoder, p unsafe.Pointer) (err error) {
	*(*bool)(p), err = d.bool()
	return err
}
func (boolNode) describe(b *strings.Builder, _ uint16) { b.WriteString("bool") }

type u8Node struct{ primitive }

func (u8Node) encode(e *encoder, p unsafe.Pointer) error {
	e.buf = append(e.buf, *(*uint8)(p))
	return nil
}
func (u8Node) decode(d *decoder, p unsafe.Pointer) (err error) {
	*(*uint8)(p), err = d.byte()
	return err
}
func (u8Node) describe(b *strings.Builder, _ uint16) { b.WriteString("u8") }

type u16Node struct{ primitive }

func (u16Node) encode(e *encoder, p unsafe.Pointer) error {
	e.uvarint(uint64(*(*uint16)(p)))
	return nil
}
func (u16Node) decode(d *decoder, p unsafe.Pointer) error {
	x, err := d.uvarintMax(math.MaxUint16, "u16")
	*(*uint16)(p) = uint16(x)
	return err
}
func (u16Node) describe(b *strings.Builder, _ uint16) { b.WriteString("u16") }

type u32Node struct{ primitive }

func (u32Node) encode(e *encoder, p unsafe.Pointer) error {
	e.uvarint(uint64(*(*uint32)(p)))
	return nil
}
func (u32Node) decode(d *decoder, p unsafe.Pointer) error {
	x, err := d.uvarintMax(math.MaxUint32, "u32")
	*(*uint32)(p) = uint32(x)
	return err
}
func (u32Node) describe(b *strings.Builder, _ uint16) { b.WriteString("u32") }

type u64Node struct{ primitive }

func (u64Node) encode(e *encoder, p unsafe.Pointer) error { e.uvarint(*(*uint64)(p)); return nil }
func (u64Node) decode(d *decoder, p unsafe.Pointer) (err error) {
	*(*uint64)(p), err = d.uvarint()
	return err
}
func (u64Node) describe(b *strings.Builder, _ uint16) { b.WriteString("u64") }

type i64Node struct{ primitive }

func (i64Node) encode(e *encoder, p unsafe.Pointer) error { e.zigzag(*(*int64)(p)); return nil }
func (i64Node) decode(d *decoder, p unsafe.Pointer) (err error) {
	*(*int64)(p), err = d.zigzag()
	return err
}
func (i64Node) describe(b *strings.Builder, _ uint16) { b.WriteString("i64") }

type f32Node struct{ primitive }

func (f32Node) encode(e *encoder, p unsafe.Pointer) error { e.f32(*(*float32)(p)); return nil }
func (f32Node) decode(d *decoder, p unsafe.Pointer) (err error) {
	*(*float32)(p), err = d.f32()
	return err
}
func (f32Node) describe(b *strings.Builder, _ uint16) { b.WriteString("f32") }

type strNode struct{ primitive }

func (strNode) encode(e *encoder, p unsafe.Pointer) error { return e.str(*(*string)(p)) }
func (strNode) decode(d *decoder, p unsafe.Pointer) (err error) {
	*(*string)(p), err = d.str()
	return err
}
func (strNode) describe(b *strings.Builder, _ uint16) { b.WriteString("str") }

// bytesNode decodes as a sub-slice of the frame: no copy (gradient-protocol §1.5).
type bytesNode struct{ primitive }

func (bytesNode) encode(e *encoder, p unsafe.Pointer) error { e.bytes(*(*[]byte)(p)); return nil }
func (bytesNode) decode(d *decoder, p unsafe.Pointer) (err error) {
	*(*[]byte)(p), err = d.span()
	return err
}
func (bytesNode) describe(b *strings.Builder, _ uint16) { b.WriteString("bytes") }
