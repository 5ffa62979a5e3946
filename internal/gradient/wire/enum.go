package wire

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"unsafe"
)

// enumDef defines one enum: its variants in wire order (the index is the position) and the
// protocol version each exists since (gradient-protocol §2.3). Data enums are sealed Go
// interfaces whose variants are pointers to structs; unit enums (every variant without fields)
// are uint8-based Go types whose value is the variant index.
type enumDef struct {
	name     string
	goType   reflect.Type
	oldest   uint16 // the `oldest = N` annotation; only ClientMessage and ServerMessage use it
	variants []variantDef
	unit     bool
	load     func(p unsafe.Pointer) any    // data enums: the interface value at p
	store    func(p unsafe.Pointer, v any) // data enums: write v (a variant pointer) at p
}

// variantDef is one variant: its since and, for data enums, its payload struct type T (the
// variant value is *T) with an allocator.
type variantDef struct {
	name  string
	since uint16
	typ   reflect.Type
	// newtype marks Variant(Inner): the variant's only field is the struct T itself, which the
	// schema writes as {{...}}. The bytes are those of T.
	newtype bool
	alloc   func() (any, unsafe.Pointer)
	addr    func(v any) unsafe.Pointer // nil for a typed nil pointer
}

// variant declares a data-enum variant whose fields are the fields of T.
func variant[T any](since uint16) variantDef {
	return variantDef{
		name:  reflect.TypeFor[T]().Name(),
		since: since,
		typ:   reflect.TypeFor[T](),
		alloc: func() (any, unsafe.Pointer) { p := new(T); return p, unsafe.Pointer(p) },
		addr:  func(v any) unsafe.Pointer { return unsafe.Pointer(v.(*T)) },
	}
}

// newtypeVariant declares a variant carrying one struct value, T itself (Job::Flake(FlakeJob)).
func newtypeVariant[T any](since uint16) variantDef {
	v := variant[T](since)
	v.newtype = true
	return v
}

// unit declares a variant of a unit enum.
func unit(name string, since uint16) variantDef { return variantDef{name: name, since: since} }

// dataEnum defines a sealed-interface enum I. It panics (at package initialisation, so no
// binary or test runs) when a variant does not implement I or variants are not append-only.
func dataEnum[I any](name string, variants ...variantDef) *enumDef {
	iface := reflect.TypeFor[I]()
	for _, v := range variants {
		if v.typ == nil || !reflect.PointerTo(v.typ).Implements(iface) {
			panic(fmt.Sprintf("wire: variant %s of %s: *%v does not implement %v", v.name, name, v.typ, iface))
		}
	}
	return mustValid(&enumDef{
		name: name, goType: iface, variants: variants,
		load:  func(p unsafe.Pointer) any { return *(*I)(p) },
		store: func(p unsafe.Pointer, v any) { *(*I)(p) = v.(I) },
	})
}

// unitEnum defines a unit enum stored as the uint8-based type E.
func unitEnum[E ~uint8](name string, variants ...variantDef) *enumDef {
	return mustValid(&enumDef{name: name, goType: reflect.TypeFor[E](), variants: variants, unit: true})
}

// withOldest records `oldest = N`: shapes below N were removed, reordered or changed meaning.
func (d *enumDef) withOldest(n uint16) *enumDef {
	d.oldest = n
	return d
}

func mustValid(d *enumDef) *enumDef {
	if err := d.appendOnly(); err != nil {
		panic("wire: " + err.Error())
	}
	return d
}

// appendOnly reports a variant whose since is lower than the one before it: variants may only
// be appended, so an index never changes meaning (gradient-protocol §2.3).
func (d *enumDef) appendOnly() error {
	for i := 1; i < len(d.variants); i++ {
		if d.variants[i].since < d.variants[i-1].since {
			return fmt.Errorf("%s: variant %d (%s, since %d) is older than variant %d (since %d); variants are append-only",
				d.name, i, d.variants[i].name, d.variants[i].since, i-1, d.variants[i-1].since)
		}
	}
	return nil
}

// variantName names unit-enum value i, for String methods.
func (d *enumDef) variantName(i uint8) string {
	if int(i) < len(d.variants) {
		return d.variants[i].name
	}
	return d.name + "(" + strconv.Itoa(int(i)) + ")"
}

// enumNode is the compiled plan of an enumDef.
type enumNode struct {
	def      *enumDef
	payloads []*structNode // per variant; nil for unit enums
	byType   map[reflect.Type]int
	bounds   versionSpan
	minimum  int
}

func (n *enumNode) span() versionSpan { return n.bounds }
func (n *enumNode) minSize() int      { return n.minimum }

func (n *enumNode) encode(e *encoder, p unsafe.Pointer) error {
	if n.def.unit {
		return n.encodeIndex(e, int(*(*uint8)(p)))
	}
	return n.encodeValue(e, n.def.load(p))
}

// encodeValue encodes a data-enum value: the variant index, then the variant's fields.
func (n *enumNode) encodeValue(e *encoder, v any) error {
	if v == nil {
		return &EncodeError{Type: n.def.name, Version: e.version, Reason: "nil value"}
	}
	i, ok := n.byType[reflect.TypeOf(v)]
	if !ok {
		return &EncodeError{Type: n.def.name, Version: e.version, Reason: fmt.Sprintf("%T is not a variant", v)}
	}
	p := n.def.variants[i].addr(v)
	if p == nil {
		return &EncodeError{Type: n.def.name, Version: e.version, Reason: fmt.Sprintf("nil %T", v)}
	}
	if err := n.encodeIndex(e, i); err != nil {
		return err
	}
	return n.payloads[i].encode(e, p)
}

func (n *enumNode) encodeIndex(e *encoder, i int) error {
	if i >= len(n.def.variants) {
		return &EncodeError{Type: n.def.name, Version: e.version, Reason: "unknown variant " + strconv.Itoa(i)}
	}
	v := &n.def.variants[i]
	if v.since > e.version {
		return &EncodeError{Type: v.name, Since: v.since, Version: e.version}
	}
	e.uvarint(uint64(i))
	return nil
}

func (n *enumNode) decode(d *decoder, p unsafe.Pointer) error {
	i, err := n.decodeIndex(d)
	if err != nil {
		return err
	}
	if n.def.unit {
		*(*uint8)(p) = uint8(i)
		return nil
	}
	v, err := n.decodeVariant(d, i)
	if err == nil {
		n.def.store(p, v)
	}
	return err
}

// decodeValue decodes a data-enum value and returns the variant pointer.
func (n *enumNode) decodeValue(d *decoder) (any, error) {
	i, err := n.decodeIndex(d)
	if err != nil {
		return nil, err
	}
	return n.decodeVariant(d, i)
}

func (n *enumNode) decodeVariant(d *decoder, i int) (any, error) {
	v, p := n.def.variants[i].alloc()
	return v, n.payloads[i].decode(d, p)
}

// decodeIndex reads a variant index, refusing one that does not exist at the decoder's version.
func (n *enumNode) decodeIndex(d *decoder) (int, error) {
	tag, err := d.uvarint()
	if err != nil {
		return 0, err
	}
	if tag >= uint64(len(n.def.variants)) || n.def.variants[tag].since > d.version {
		return 0, UnknownVariantError{Type: n.def.name, Tag: tag, Version: d.version}
	}
	return int(tag), nil
}

// describe writes a nested enum: [0:{...},1:{...}] over the variants present at version.
func (n *enumNode) describe(b *strings.Builder, version uint16) {
	b.WriteByte('[')
	for i := range n.def.variants {
		if n.def.variants[i].since > version {
			break // append-only: every later variant is newer still
		}
		if i > 0 {
			b.WriteByte(',')
		}
		n.describeVariant(b, i, version)
	}
	b.WriteByte(']')
}

// describeVariant writes "i:{fields}".
func (n *enumNode) describeVariant(b *strings.Builder, i int, version uint16) {
	b.WriteString(strconv.Itoa(i))
	b.WriteByte(':')
	switch {
	case n.def.unit:
		b.WriteString("{}")
	case n.def.variants[i].newtype:
		b.WriteByte('{')
		n.payloads[i].describe(b, version)
		b.WriteByte('}')
	default:
		n.payloads[i].describe(b, version)
	}
}

// enumSpan applies gradient-protocol §2.3 to an enum: NEWEST covers every variant's since; a
// variant whose payload is newer than the variant raises OLDEST, and so does the `oldest = N`
// annotation.
func (n *enumNode) enumSpan() versionSpan {
	s := versionSpan{oldest: n.def.oldest}
	for i, v := range n.def.variants {
		var inner versionSpan
		if !n.def.unit {
			inner = n.payloads[i].span()
		}
		s.oldest = max(s.oldest, floorAbove(inner.oldest, v.since))
		s.newest = max(s.newest, v.since, inner.newest)
	}
	s.newest = max(s.newest, s.oldest)
	return s
}
