package wire

import (
	"reflect"

	"pgregory.net/rapid"
)

// valueGen draws arbitrary values of the wire types for one protocol version, walking the
// same definitions the codec compiles: only variants and default fields present at that
// version are drawn, so a round trip at the version is lossless.
type valueGen struct {
	enums   map[reflect.Type]*enumDef
	version uint16
}

func newValueGen(version uint16) *valueGen {
	g := &valueGen{enums: map[reflect.Type]*enumDef{}, version: version}
	for _, d := range append([]*enumDef{clientMessageEnum, serverMessageEnum}, sharedEnums()...) {
		g.enums[d.goType] = d
	}
	return g
}

// message draws variant i of a top-level enum.
func (g *valueGen) message(t *rapid.T, d *enumDef, i int) Message {
	return g.variant(t, d, i).Interface().(Message)
}

func (g *valueGen) variant(t *rapid.T, d *enumDef, i int) reflect.Value {
	p := reflect.New(d.variants[i].typ)
	p.Elem().Set(g.value(t, d.variants[i].typ))
	return p
}

func (g *valueGen) value(t *rapid.T, typ reflect.Type) reflect.Value {
	if d, ok := g.enums[typ]; ok {
		return g.enum(t, d)
	}
	v := reflect.New(typ).Elem()
	switch typ.Kind() {
	case reflect.Bool:
		v.SetBool(rapid.Bool().Draw(t, "bool"))
	case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(rapid.Uint64Max(1<<(8*typ.Size())-1).Draw(t, typ.String()))
	case reflect.Int64:
		v.SetInt(rapid.Int64().Draw(t, "i64"))
	case reflect.Float32:
		v.SetFloat(float64(rapid.Float32().Draw(t, "f32")))
	case reflect.String:
		v.SetString(rapid.String().Draw(t, "str"))
	case reflect.Slice:
		g.slice(t, v)
	case reflect.Struct:
		g.structure(t, v)
	default:
		panic("valueGen: unsupported " + typ.String())
	}
	return v
}

func (g *valueGen) slice(t *rapid.T, v reflect.Value) {
	if v.Type().Elem() == byteType {
		if b := rapid.SliceOfN(rapid.Byte(), 0, 64).Draw(t, "bytes"); len(b) > 0 {
			v.SetBytes(b)
		}
		return
	}
	n := rapid.IntRange(0, 3).Draw(t, "len")
	if n == 0 {
		return // decoding yields nil for an empty sequence
	}
	v.Set(reflect.MakeSlice(v.Type(), n, n))
	for i := range n {
		v.Index(i).Set(g.value(t, v.Type().Elem()))
	}
}

func (g *valueGen) structure(t *rapid.T, v reflect.Value) {
	typ := v.Type()
	if typ.Implements(optionMarkerType) {
		if rapid.Bool().Draw(t, "some") {
			v.Field(0).Set(g.value(t, typ.Field(0).Type))
			v.Field(1).SetBool(true)
		}
		return
	}
	for i := range typ.NumField() {
		since, optional, _ := parseTag(typ.Field(i).Tag.Get("proto"))
		if optional && g.version < since {
			continue
		}
		v.Field(i).Set(g.value(t, typ.Field(i).Type))
	}
}

func (g *valueGen) enum(t *rapid.T, d *enumDef) reflect.Value {
	i := rapid.IntRange(0, g.present(d)-1).Draw(t, d.name)
	v := reflect.New(d.goType).Elem()
	if d.unit {
		v.SetUint(uint64(i))
	} else {
		v.Set(g.variant(t, d, i))
	}
	return v
}

// present counts the variants that exist at the generator's version.
func (g *valueGen) present(d *enumDef) int {
	n := 0
	for _, v := range d.variants {
		if v.since <= g.version {
			n++
		}
	}
	return n
}
