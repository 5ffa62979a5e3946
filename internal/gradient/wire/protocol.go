package wire

import (
	"fmt"
	"iter"
	"strconv"
	"strings"
	"sync"
)

// VersionRange is a range of protocol versions, both ends included.
type VersionRange struct{ Oldest, Newest uint16 }

// String writes the range as gradient-protocol §1.2 does: "30..=30".
func (r VersionRange) String() string {
	return strconv.Itoa(int(r.Oldest)) + "..=" + strconv.Itoa(int(r.Newest))
}

// Contains reports whether v is in the range.
func (r VersionRange) Contains(v uint16) bool { return r.Oldest <= v && v <= r.Newest }

// All yields every version in the range, oldest first.
func (r VersionRange) All() iter.Seq[uint16] {
	return func(yield func(uint16) bool) {
		for v := int(r.Oldest); v <= int(r.Newest); v++ {
			if !yield(uint16(v)) {
				return
			}
		}
	}
}

// protocol is a compiled pair of top-level enums (ClientMessage, ServerMessage). Production
// code has exactly one; tests build others from their own annotated types.
type protocol struct {
	client, server *enumNode
	versions       VersionRange
}

// buildProtocol compiles client and server and every enum they reach (listed in nested) and
// computes PROTO_VERSIONS = max(C.OLDEST, S.OLDEST) ..= max(C.NEWEST, S.NEWEST)
// (gradient-protocol §2.3).
func buildProtocol(client, server *enumDef, nested ...*enumDef) *protocol {
	c := newCompiler(append([]*enumDef{client, server}, nested...))
	p := &protocol{
		client: c.node(client.goType).(*enumNode),
		server: c.node(server.goType).(*enumNode),
	}
	cs, ss := p.client.span(), p.server.span()
	p.versions = VersionRange{Oldest: max(cs.oldest, ss.oldest), Newest: max(cs.newest, ss.newest)}
	return p
}

// describe writes the schema text of gradient-protocol §2.3 for version v: "client", one
// "idx:{...}" line per variant present at v, then "server" and the same.
func (p *protocol) describe(v uint16) string {
	var b strings.Builder
	for _, side := range []struct {
		title string
		enum  *enumNode
	}{{"client", p.client}, {"server", p.server}} {
		b.WriteString(side.title)
		b.WriteByte('\n')
		for i, variant := range side.enum.def.variants {
			if variant.since > v {
				break
			}
			side.enum.describeVariant(&b, i, v)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// coders recycle encoders and decoders: both escape through the plans' interface calls, and
// a pooled one saves an allocation per message.
var (
	encoders = sync.Pool{New: func() any { return new(encoder) }}
	decoders = sync.Pool{New: func() any { return new(decoder) }}
)

// appendValue encodes top-level value m for version v after dst. On failure dst is returned
// unchanged.
func appendValue(dst []byte, top *enumNode, m any, v uint16) ([]byte, error) {
	e := encoders.Get().(*encoder)
	*e = encoder{buf: dst, version: v}
	err := top.encodeValue(e, m)
	out := e.buf
	*e = encoder{} // drop the caller's buffer before pooling
	encoders.Put(e)
	if err != nil {
		return dst, err
	}
	return out, nil
}

// decodeValue decodes exactly one top-level value from frame at version v.
func decodeValue(frame []byte, top *enumNode, v uint16) (any, error) {
	d := decoders.Get().(*decoder)
	*d = decoder{buf: frame, version: v}
	m, err := top.decodeValue(d)
	if err == nil && d.pos != len(frame) {
		err = TrailingBytesError{N: len(frame) - d.pos}
	}
	pos := d.pos
	*d = decoder{} // drop the frame and the string arena before pooling
	decoders.Put(d)
	if err != nil {
		return nil, &DecodeError{Message: top.def.name, Offset: pos, Err: err}
	}
	return m, nil
}

// gradient is the production protocol, compiled on first use.
var gradient = sync.OnceValue(func() *protocol {
	return buildProtocol(clientMessageEnum, serverMessageEnum, sharedEnums()...)
})

// ProtoVersions is the supported range, computed from the annotations of every message type
// (gradient-protocol §2.3); never typed in. Today it is 30..=30.
func ProtoVersions() VersionRange { return gradient().versions }

// Describe returns the schema text of version v, as stored in schema/v{v}.txt. It is written
// from the same plans the codec runs, so the two cannot disagree.
func Describe(v uint16) string { return gradient().describe(v) }

// Append encodes m (a ClientMessage or ServerMessage) for protocol version v after dst and
// returns the extended buffer. A variant newer than v, a nil enum value or a string that is
// not UTF-8 is an *EncodeError, and dst is returned unchanged. The codec encodes at any
// version it is given; the session only ever passes the agreed one, which lies in
// ProtoVersions (tests also encode below it to pin older shapes).
func Append(dst []byte, m Message, v uint16) ([]byte, error) {
	switch m := m.(type) {
	case ClientMessage:
		return appendValue(dst, gradient().client, m, v)
	case ServerMessage:
		return appendValue(dst, gradient().server, m, v)
	}
	return dst, &EncodeError{Type: fmt.Sprintf("%T", m), Version: v, Reason: "not a ClientMessage or ServerMessage"}
}

// Encode encodes m for protocol version v into a new buffer.
func Encode(m Message, v uint16) ([]byte, error) { return Append(nil, m, v) }

// DecodeClientMessage decodes one ClientMessage frame at protocol version v. Failures are
// *DecodeError wrapping a typed error. []byte fields of the result alias frame.
func DecodeClientMessage(frame []byte, v uint16) (ClientMessage, error) {
	m, err := decodeValue(frame, gradient().client, v)
	if err != nil {
		return nil, err
	}
	return m.(ClientMessage), nil
}

// DecodeServerMessage decodes one ServerMessage frame at protocol version v. Failures are
// *DecodeError wrapping a typed error. []byte fields of the result alias frame.
func DecodeServerMessage(frame []byte, v uint16) (ServerMessage, error) {
	m, err := decodeValue(frame, gradient().server, v)
	if err != nil {
		return nil, err
	}
	return m.(ServerMessage), nil
}
