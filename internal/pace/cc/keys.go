package cc

import (
	"bytes"
	"sort"
	"strconv"
	"strings"

	"github.com/buildfleet/buildfleet/internal/pace/cachekey"
)

// locationSensitive reports whether the object records where it was built: with debug
// information the DWARF names the working directory and the absolute paths of the source and
// headers, unless prefix maps cover every one of them. Such a key keeps the raw paths and the
// raw working directory, so a hit is byte-identical to a compile at this path (gcc without -g
// writes only the source's base name, checked).
func (r *run) locationSensitive() bool {
	if r.comp.Debug.Level == 0 {
		return false
	}
	for _, dir := range []string{r.cwd, r.cfg.SourceDir, r.cfg.BinaryDir} {
		if dir != "" && !r.prefixMapped(dir) {
			return true
		}
	}
	return false
}

func (r *run) prefixMapped(dir string) bool {
	for _, m := range r.comp.PrefixMaps {
		if (m.Flag == "-fdebug-prefix-map=" || m.Flag == "-ffile-prefix-map=") && strings.HasPrefix(dir, m.Old) {
			return true
		}
	}
	return false
}

// objectKey is the digest of everything that decides the compile's output (pace-wire §3.5):
// the compiler, the preprocessed text with its line markers (they carry the line layout that
// warnings and debug line tables show), the relativized arguments, the project dependencies,
// and where location matters, the working directory.
func (r *run) objectKey(pp probed) cachekey.Digest {
	b := cachekey.New(cachekey.TagObject).FieldString(r.id.String())
	sensitive := r.locationSensitive()
	if sensitive {
		b.Field(pp.text).FieldString(r.cwd)
	} else {
		b.Field(r.relativizeMarkers(pp.text)).FieldString("")
	}
	r.addArgsAndEnv(b)
	for _, d := range r.keyedDeps(pp.deps) {
		b.Path(d)
	}
	return b.Sum()
}

// keyedDeps are the dependencies that belong to the project: under a root (tokenized) or
// spelled relative; toolchain and system headers are covered by the text and the identity.
func (r *run) keyedDeps(deps []string) []string {
	roots := r.roots()
	out := make([]string, 0, len(deps))
	for _, d := range deps {
		if !strings.HasPrefix(d, "/") {
			out = append(out, d)
			continue
		}
		if rel := roots.Relativize(d); rel != d {
			out = append(out, rel)
		}
	}
	sort.Strings(out)
	return out
}

// manifestKey names the direct-mode manifest of this compile: compiler, source (tokenized),
// arguments and working directory (tokenized unless location matters), but no file contents,
// which the manifest itself records.
func (r *run) manifestKey() cachekey.Digest {
	roots := r.roots()
	cwd := r.cwd
	if !r.locationSensitive() {
		cwd = roots.Relativize(cwd)
	}
	b := cachekey.New(cachekey.TagManifest).FieldString(r.id.String())
	b.Path(roots.Relativize(r.abs(r.comp.Source))).FieldString(cwd)
	r.addArgsAndEnv(b)
	return b.Sum()
}

// addArgsAndEnv adds the relativized arguments, then the keyed environment after a separator
// piece so an argument can never pose as a variable.
func (r *run) addArgsAndEnv(b *cachekey.Builder) {
	for _, a := range r.comp.KeyArgs() {
		b.Item(a)
	}
	b.FieldString("env")
	for _, e := range r.cfg.KeyEnv {
		b.Item(e)
	}
}

// relativizeMarkers rewrites the file names of the preprocessor's line markers
// (`# 12 "/src/lua/lapi.c" 2`) with the roots' tokens, so two checkouts of one tree hash the
// same text. String literals (a __FILE__ expansion) are left alone: they do reach the object.
func (r *run) relativizeMarkers(text []byte) []byte {
	roots := r.roots()
	if roots.Empty() {
		return text
	}
	out := make([]byte, 0, len(text))
	for len(text) > 0 {
		line := text
		if i := bytes.IndexByte(text, '\n'); i >= 0 {
			line = text[:i+1]
		}
		text = text[len(line):]
		out = appendMarker(out, line, roots.Relativize)
	}
	return out
}

// appendMarker appends line, with its file name relativized when it is a line marker.
func appendMarker(out, line []byte, relativize func(string) string) []byte {
	if len(line) < 5 || line[0] != '#' || line[1] != ' ' || line[2] < '0' || line[2] > '9' {
		return append(out, line...)
	}
	q := bytes.IndexByte(line, '"')
	end := bytes.LastIndexByte(line, '"')
	if q < 0 || end <= q || bytes.IndexByte(line[q+1:end], '\\') >= 0 {
		return append(out, line...) // an escaped name: keep it verbatim (never wrong, just unshared)
	}
	name := string(line[q+1 : end])
	rel := relativize(name)
	if rel == name {
		return append(out, line...)
	}
	out = append(out, line[:q+1]...)
	out = append(out, rel...)
	return append(out, line[end:]...)
}

// keyMod picks one hit in n for PACE_VERIFY, stably per key.
func keyMod(d cachekey.Digest, n uint64) bool {
	v, _ := strconv.ParseUint(d.Hex()[:15], 16, 64)
	return n > 0 && v%n == 0
}
