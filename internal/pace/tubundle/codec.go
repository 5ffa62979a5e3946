package tubundle

import (
	"bytes"
	"fmt"

	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// The encoding (pace-wire §3.9.1): Magic, then five fields in the wire's field grammar:
// [locale] [source: base, debug, macro] [files: each base, debug, macro, u8 hasContent,
// content] [regions: each u8 system, text] [forced: each u32 region]. Lists are fields
// holding one field per entry; records are fields holding their own fields.

// IsBundle reports whether a COMPILE's source is a bundle rather than preprocessed text.
func IsBundle(source []byte) bool { return bytes.HasPrefix(source, []byte(Magic)) }

// Encode appends b's encoding to dst.
func Encode(dst []byte, b *Bundle) []byte {
	dst = grow(dst, encodedSize(b))
	dst = append(dst, Magic...)
	dst = wire.AppendStringField(dst, b.Locale)
	dst, mark := wire.BeginField(dst)
	dst = appendNames(dst, b.Source)
	dst = wire.EndField(dst, mark)
	dst, mark = wire.BeginField(dst)
	for _, f := range b.Files {
		var rec int
		dst, rec = wire.BeginField(dst)
		dst = appendNames(dst, f)
		dst = wire.AppendU8Field(dst, boolByte(f.HasContent))
		dst = wire.AppendField(dst, f.Content)
		dst = wire.EndField(dst, rec)
	}
	dst = wire.EndField(dst, mark)
	dst, mark = wire.BeginField(dst)
	for _, r := range b.Regions {
		var rec int
		dst, rec = wire.BeginField(dst)
		dst = wire.AppendU8Field(dst, boolByte(r.System))
		dst = wire.AppendField(dst, r.Text)
		dst = wire.EndField(dst, rec)
	}
	dst = wire.EndField(dst, mark)
	dst, mark = wire.BeginField(dst)
	for _, i := range b.Forced {
		dst = wire.AppendU32Field(dst, uint32(i))
	}
	return wire.EndField(dst, mark)
}

// encodedSize is the length of b's encoding, so that Encode allocates once.
func encodedSize(b *Bundle) int {
	const p = wire.FieldPrefixLen
	n := len(Magic) + 5*p + len(b.Locale) + 3*p + len(b.Source.Base) + len(b.Source.Debug) + len(b.Source.Macro)
	for _, f := range b.Files {
		n += p + 5*p + 1 + len(f.Base) + len(f.Debug) + len(f.Macro) + len(f.Content)
	}
	for _, r := range b.Regions {
		n += p + 2*p + 1 + len(r.Text)
	}
	return n + len(b.Forced)*(p+4)
}

func grow(dst []byte, n int) []byte {
	if cap(dst)-len(dst) >= n {
		return dst
	}
	return append(make([]byte, 0, len(dst)+n), dst...)
}

func appendNames(dst []byte, f File) []byte {
	dst = wire.AppendStringField(dst, f.Base)
	dst = wire.AppendStringField(dst, f.Debug)
	return wire.AppendStringField(dst, f.Macro)
}

func boolByte(v bool) uint8 {
	if v {
		return 1
	}
	return 0
}

// Decode reads an encoded bundle. Every count is checked against its bound and against the
// bytes present before a slice is made for it; the texts alias src. Structure only: Screen
// judges the regions' directives.
func Decode(src []byte) (*Bundle, error) {
	rest, ok := bytes.CutPrefix(src, []byte(Magic))
	if !ok {
		return nil, malformed("no bundle magic")
	}
	top, err := wire.SplitFields(nil, rest, 5)
	if err != nil {
		return nil, malformed("%v", err)
	}
	b := &Bundle{Locale: string(top[0])}
	if b.Locale != LocaleC && b.Locale != LocaleCUTF8 {
		return nil, malformed("locale %q", printable(top[0], 16))
	}
	if b.Source, err = decodeNames(top[1], 3); err != nil {
		return nil, malformed("source: %v", err)
	}
	if b.Files, err = decodeFiles(top[2]); err != nil {
		return nil, err
	}
	if b.Regions, err = decodeRegions(top[3]); err != nil {
		return nil, err
	}
	if b.Forced, err = decodeForced(top[4], len(b.Regions)); err != nil {
		return nil, err
	}
	return b, nil
}

// list splits a list field of at most max entries.
func list(f []byte, max int, what string) ([][]byte, error) {
	n, err := wire.CountFields(f)
	if err != nil {
		return nil, malformed("%s: %v", what, err)
	}
	if n > max {
		return nil, malformed("%d %s, more than %d", n, what, max)
	}
	return wire.SplitFields(make([][]byte, 0, n), f, n)
}

// decodeNames reads a record whose first three fields are base, debug and macro names.
func decodeNames(rec []byte, n int) (File, error) {
	fs, err := wire.SplitFields(nil, rec, n)
	if err != nil {
		return File{}, err
	}
	f := File{Base: string(fs[0]), Debug: string(fs[1]), Macro: string(fs[2])}
	switch {
	case !validBase(f.Base):
		return f, fmt.Errorf("base name %q", printable(fs[0], 64))
	case !validName(f.Debug) || !validName(f.Macro):
		return f, fmt.Errorf("a name longer than %d bytes or holding a line break", MaxName)
	}
	if n == 5 {
		f.HasContent, f.Content = len(fs[3]) == 1 && fs[3][0] == 1, fs[4]
		if !f.HasContent && len(f.Content) > 0 {
			return f, fmt.Errorf("content for a file marked unread")
		}
	}
	return f, nil
}

func decodeFiles(f []byte) ([]File, error) {
	recs, err := list(f, MaxFiles, "files")
	if err != nil {
		return nil, err
	}
	files := make([]File, len(recs))
	for i, rec := range recs {
		if files[i], err = decodeNames(rec, 5); err != nil {
			return nil, malformed("file %d: %v", i, err)
		}
	}
	return files, nil
}

func decodeRegions(f []byte) ([]Region, error) {
	recs, err := list(f, MaxRegions, "regions")
	if err != nil {
		return nil, err
	}
	if len(recs) == 0 {
		return nil, malformed("no main region")
	}
	regions := make([]Region, len(recs))
	for i, rec := range recs {
		fs, err := wire.SplitFields(nil, rec, 2)
		if err != nil || len(fs[0]) != 1 || fs[0][0] > 1 {
			return nil, malformed("region %d: not [u8 system][text]", i)
		}
		regions[i] = Region{System: fs[0][0] == 1, Text: fs[1]}
	}
	if regions[0].System {
		return nil, malformed("the main region is a system header")
	}
	return regions, nil
}

func decodeForced(f []byte, regions int) ([]int, error) {
	recs, err := list(f, MaxRegions, "forced includes")
	if err != nil {
		return nil, err
	}
	out := make([]int, len(recs))
	for i, rec := range recs {
		v, err := wire.U32(rec)
		if err != nil || v == 0 || int(v) >= regions {
			return nil, malformed("forced include %d: not a region other than the main one", i)
		}
		out[i] = int(v)
	}
	return out, nil
}

func malformed(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrMalformed, fmt.Sprintf(format, a...))
}

// printable renders untrusted bytes for an error message: printable ASCII kept, others '?',
// at most max bytes.
func printable(b []byte, max int) string {
	if len(b) > max {
		b = b[:max]
	}
	out := make([]byte, len(b))
	for i, c := range b {
		if c < 0x20 || c > 0x7e {
			c = '?'
		}
		out[i] = c
	}
	return string(out)
}
