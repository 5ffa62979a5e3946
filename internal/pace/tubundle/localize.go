package tubundle

import (
	"bytes"
	"fmt"
)

// Localize maps the worker's diagnostics back to the names a local compile prints: every
// synthetic file name becomes the file's own. ok is false, with why, when the result could
// differ from a local compile's: the bundle's directives were not all restored, or the text
// still names the worker's scratch files or directory after the mapping. A file the client
// could not read has no caret lines on either side, so naming one is exact.
func Localize(stderr []byte, b *Built) (out []byte, ok bool, why string) {
	if len(stderr) == 0 {
		return stderr, true, ""
	}
	if b.Inexact != "" {
		return nil, false, b.Inexact
	}
	if i := bytes.Index(stderr, []byte(inexactMark)); i >= 0 {
		why, _, _ := bytes.Cut(stderr[i+len(inexactMark):], []byte(">"))
		return nil, false, "the worker says: " + printable(why, 96)
	}
	out = make([]byte, 0, len(stderr))
	rest := stderr
	for {
		i := bytes.Index(rest, []byte("pace-f/"))
		if i < 0 {
			out = append(out, rest...)
			break
		}
		n, size, found := b.syntheticAt(rest[i:])
		if !found {
			return nil, false, "the diagnostics name a scratch file of the worker's that the client did not send"
		}
		out = append(append(out, rest[:i]...), b.Names[n]...)
		rest = rest[i+size:]
	}
	for _, leftover := range []string{"pace-r/", ScratchToken} {
		if bytes.Contains(out, []byte(leftover)) {
			return nil, false, fmt.Sprintf("the diagnostics name the worker's scratch files (%s)", leftover)
		}
	}
	return out, true, ""
}

// syntheticAt reads the synthetic file name at the start of s: its index and length.
func (b *Built) syntheticAt(s []byte) (int, int, bool) {
	n, ok := synthetic6(s, "pace-f/", "/")
	if !ok || n >= len(b.Names) {
		return 0, 0, false
	}
	name := FileName(n, b.Bundle.Files[n].Base)
	if !bytes.HasPrefix(s, []byte(name)) {
		return 0, 0, false
	}
	return n, len(name), true
}
