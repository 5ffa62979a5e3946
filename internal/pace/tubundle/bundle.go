package tubundle

import (
	"errors"
	"fmt"
)

// Magic opens an encoded bundle. gcc's preprocessed output never starts with a NUL byte, so
// a worker tells a bundle from preprocessed text by its first bytes.
const Magic = "\x00pace-tu-1\x00"

// Bounds a decoded bundle is held to before anything is allocated for it.
const (
	// MaxFiles bounds the distinct file names of one translation unit (LevelDB's largest read
	// under 300; a worker makes a directory and a file for each).
	MaxFiles   = 1 << 13
	MaxRegions = 1 << 14 // file entries, forced includes among them
	MaxName    = 4096    // a debug or macro name (PATH_MAX)
	MaxBase    = 128     // a base name
)

// Locales the compiler may run under: the client's own, when it is one of these, decides the
// quotes and language of the diagnostics.
const (
	LocaleC     = "C"
	LocaleCUTF8 = "C.UTF-8"
)

// ErrMalformed is what every Decode error wraps; ErrUnbuildable every Build error.
var (
	ErrMalformed   = errors.New("malformed bundle")
	ErrUnbuildable = errors.New("directives-only text not bundled")
)

// File is one distinct file name the translation unit read (or a #line directive named).
type File struct {
	Base  string // the original's last path component, which ends its synthetic name
	Debug string // the name debug information records (the command's prefix maps applied)
	Macro string // the name __FILE__ spells
	// Content is the original file, for the diagnostics' caret lines; nil when the client
	// could not read it (HasContent false).
	Content    []byte
	HasContent bool
}

// Region is one entry of a file into the translation unit, as the worker compiles it.
type Region struct {
	System bool // entered as a system header: written where -isystem finds it
	Text   []byte
}

// Bundle is a translation unit ready for a gcc worker. Regions[0] is the main file.
type Bundle struct {
	Locale  string
	Source  File // the main input's names (Base, Debug, Macro; no content)
	Files   []File
	Regions []Region
	Forced  []int // regions included from the command line, in order (stdc-predef.h, -include)
}

// FileName is the synthetic name file i is known by in the regions and the diagnostics.
func FileName(i int, base string) string { return fmt.Sprintf("pace-f/%06d/%s", i, base) }

// RegionName is what an #include names region i by.
func RegionName(i int) string { return fmt.Sprintf("pace-r/%06d", i) }

// validBase: a base name the worker can create and gcc prints as is.
func validBase(b string) bool {
	if b == "" || b == "." || b == ".." || len(b) > MaxBase {
		return false
	}
	for i := 0; i < len(b); i++ {
		c := b[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '+' || c == '-') {
			return false
		}
	}
	return true
}

// validName: a debug or macro name a prefix map can carry (no NUL, no newline).
func validName(n string) bool {
	if len(n) > MaxName {
		return false
	}
	for i := 0; i < len(n); i++ {
		if n[i] == 0 || n[i] == '\n' || n[i] == '\r' {
			return false
		}
	}
	return true
}
