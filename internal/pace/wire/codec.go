package wire

import "strconv"

// Codec identifies a compression codec in an envelope or codec list
// (pace-wire §1.9).
type Codec uint8

// Codec ids.
const (
	CodecIdentity Codec = 0
	CodecLZ4      Codec = 1 // LZ4 block format
	CodecZstd     Codec = 2 // Zstandard frame
)

var codecNames = [...]string{"identity", "lz4", "zstd"}

func (c Codec) String() string {
	if int(c) < len(codecNames) {
		return codecNames[c]
	}
	return "codec-" + strconv.Itoa(int(c))
}

// CodecSet is a set of the codecs this build knows, one bit per id.
type CodecSet uint8

// SupportedCodecs is every codec this build can produce and decode.
const SupportedCodecs CodecSet = 1<<CodecIdentity | 1<<CodecLZ4 | 1<<CodecZstd

// Has reports whether c is in the set.
func (s CodecSet) Has(c Codec) bool { return c < 8 && s&(1<<c) != 0 }

// With returns the set plus c (ids above 7 are unknown here and ignored).
func (s CodecSet) With(c Codec) CodecSet {
	if c >= 8 {
		return s
	}
	return s | 1<<c
}

// CodecList is a peer's codec preference list: up to 16 ids, most
// preferred first. It is a value type so parsing one allocates nothing.
type CodecList struct {
	ids [MaxCodecList]Codec
	n   uint8
}

// NewCodecList builds a list; ids beyond MaxCodecList are dropped.
func NewCodecList(ids ...Codec) CodecList {
	var l CodecList
	for _, id := range ids {
		if int(l.n) == MaxCodecList {
			break
		}
		l.ids[l.n] = id
		l.n++
	}
	return l
}

// ParseCodecList reads a codec-list field: one raw byte per id, at most
// 16. Ids this build does not know are kept; choosing skips them.
func ParseCodecList(f []byte) (CodecList, error) {
	if len(f) > MaxCodecList {
		return CodecList{}, ErrTooManyEntries
	}
	var l CodecList
	for i, b := range f {
		l.ids[i] = Codec(b)
	}
	l.n = uint8(len(f))
	return l, nil
}

// Len is the number of ids in the list.
func (l CodecList) Len() int { return int(l.n) }

// At returns the i-th id.
func (l CodecList) At(i int) Codec { return l.ids[i] }

// Set is the known codecs the list names, plus Identity, which is always
// acceptable.
func (l CodecList) Set() CodecSet {
	set := CodecSet(1 << CodecIdentity)
	for _, id := range l.ids[:l.n] {
		set = set.With(id)
	}
	return set
}

// AppendField appends the list as one field.
func (l CodecList) AppendField(dst []byte) []byte {
	dst = append(dst, 0, 0, 0, l.n)
	for _, id := range l.ids[:l.n] {
		dst = append(dst, byte(id))
	}
	return dst
}

// ChooseCodec picks the codec a producer uses for a payload bound for a
// receiver that listed receiverList: the first id in that list the
// producer can produce; nothing in common is Identity (never a refusal).
func ChooseCodec(receiverList CodecList, producible CodecSet) Codec {
	for _, id := range receiverList.ids[:receiverList.n] {
		if producible.Has(id) {
			return id
		}
	}
	return CodecIdentity
}
