package wire

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
)

// compiler turns Go types into plans, once per type. Enums are looked up in the registries
// the protocol was built with.
type compiler struct {
	enums map[reflect.Type]*enumDef
	nodes map[reflect.Type]node
	busy  map[reflect.Type]bool
}

func newCompiler(defs []*enumDef) *compiler {
	c := &compiler{
		enums: make(map[reflect.Type]*enumDef, len(defs)),
		nodes: make(map[reflect.Type]node),
		busy:  make(map[reflect.Type]bool),
	}
	for _, d := range defs {
		if _, dup := c.enums[d.goType]; dup {
			panic("wire: enum " + d.name + " registered twice")
		}
		c.enums[d.goType] = d
	}
	return c
}

func (c *compiler) node(t reflect.Type) node {
	if n, ok := c.nodes[t]; ok {
		return n
	}
	if c.busy[t] {
		panic(fmt.Sprintf("wire: %v is recursive; the codec supports only finite shapes", t))
	}
	c.busy[t] = true
	n := c.build(t)
	c.nodes[t] = n
	return n
}

var (
	byteType         = reflect.TypeFor[byte]()
	optionMarkerType = reflect.TypeFor[optionMarker]()
	tupleMarkerType  = reflect.TypeFor[tupleMarker]()
)

func (c *compiler) build(t reflect.Type) node {
	if def, ok := c.enums[t]; ok {
		return c.enum(def)
	}
	switch t.Kind() {
	case reflect.Bool:
		return boolNode{primitive{1}}
	case reflect.Uint8:
		if t != byteType {
			// Named uint8 types are unit enums; a forgotten registry would otherwise
			// silently put a raw u8 on the wire.
			panic(fmt.Sprintf("wire: %v is not a registered unit enum (add it to sharedEnums)", t))
		}
		return u8Node{primitive{1}}
	case reflect.Uint16:
		return u16Node{primitive{1}}
	case reflect.Uint32:
		return u32Node{primitive{1}}
	case reflect.Uint64:
		return u64Node{primitive{1}}
	case reflect.Int64:
		return i64Node{primitive{1}}
	case reflect.Float32:
		return f32Node{primitive{4}}
	case reflect.String:
		return strNode{primitive{1}}
	case reflect.Slice:
		if t.Elem() == byteType {
			return bytesNode{primitive{1}}
		}
		elem := c.node(t.Elem())
		return &seqNode{elem: elem, elemSize: t.Elem().Size(), typ: t, minItem: elem.minSize()}
	case reflect.Struct:
		return c.structure(t)
	case reflect.Interface:
		panic(fmt.Sprintf("wire: interface %v has no variant registry", t))
	}
	panic(fmt.Sprintf("wire: unsupported type %v (kind %v)", t, t.Kind()))
}

func (c *compiler) structure(t reflect.Type) node {
	if t.Implements(optionMarkerType) {
		return &optNode{elem: c.node(t.Field(0).Type), validOff: t.Field(1).Offset}
	}
	n := &structNode{tuple: t.Implements(tupleMarkerType)}
	for i := range t.NumField() {
		n.fields = append(n.fields, c.field(t, t.Field(i)))
	}
	n.bounds = structSpan(n.fields)
	for _, f := range n.fields {
		if !f.optional {
			n.minimum += f.node.minSize()
		}
	}
	return n
}

func (c *compiler) field(t reflect.Type, sf reflect.StructField) field {
	if !sf.IsExported() {
		panic(fmt.Sprintf("wire: %v.%s is unexported; every field is on the wire", t, sf.Name))
	}
	since, optional, err := parseTag(sf.Tag.Get("proto"))
	if err != nil {
		panic(fmt.Sprintf("wire: %v.%s: %v", t, sf.Name, err))
	}
	return field{name: sf.Name, offset: sf.Offset, node: c.node(sf.Type), since: since, optional: optional}
}

// parseTag reads `proto:"since=N"` or `proto:"since=N,default"`.
func parseTag(tag string) (since uint16, optional bool, err error) {
	if tag == "" {
		return 0, false, nil
	}
	for part := range strings.SplitSeq(tag, ",") {
		switch {
		case part == "default":
			optional = true
		case strings.HasPrefix(part, "since="):
			n, perr := strconv.ParseUint(strings.TrimPrefix(part, "since="), 10, 16)
			if perr != nil {
				return 0, false, fmt.Errorf("bad since in proto tag %q: %w", tag, perr)
			}
			since = uint16(n)
		default:
			return 0, false, fmt.Errorf("unknown proto tag part %q", part)
		}
	}
	if optional && since == 0 {
		return 0, false, fmt.Errorf("proto tag %q: default needs since=N", tag)
	}
	return since, optional, nil
}

func (c *compiler) enum(def *enumDef) *enumNode {
	n := &enumNode{def: def, byType: make(map[reflect.Type]int, len(def.variants)), minimum: 1}
	if !def.unit {
		if def.goType.Kind() != reflect.Interface {
			panic("wire: data enum " + def.name + " is not an interface type")
		}
		smallest := -1
		for i, v := range def.variants {
			payload, ok := c.node(v.typ).(*structNode)
			if !ok {
				panic(fmt.Sprintf("wire: variant %s of %s is not a struct", v.name, def.name))
			}
			n.payloads = append(n.payloads, payload)
			n.byType[reflect.PointerTo(v.typ)] = i
			if smallest < 0 || payload.minSize() < smallest {
				smallest = payload.minSize()
			}
		}
		n.minimum += max(smallest, 0)
	} else if def.goType.Kind() != reflect.Uint8 {
		panic("wire: unit enum " + def.name + " is not uint8-based")
	}
	n.bounds = n.enumSpan()
	return n
}
