package worker

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/buildfleet/buildfleet/internal/pace/argvet"
	"github.com/buildfleet/buildfleet/internal/pace/ccargs"
	"github.com/buildfleet/buildfleet/internal/pace/toolchain"
	"github.com/buildfleet/buildfleet/internal/pace/verbs"
)

// Toolchain is one compiler this worker serves: a job names its
// fingerprint, and the worker runs Path, never a path from the job.
type Toolchain struct {
	Fingerprint string
	Path        string // the compiler the worker runs (resolved)
	// Label is what the operator reads, e.g. "gcc 12.2.0" (capacity
	// record's toolchainLabel, ≤ verbs.MaxLabel bytes).
	Label string
	// Flavor decides the argument allowlist; FlavorUnknown means the
	// driver could not be classified and every job for it is refused.
	Flavor argvet.Flavor
	Pinned bool // named by --toolchain
}

// Pin is one --toolchain entry: a compiler to identify, or a fingerprint
// bound to a compiler that is never probed.
type Pin struct {
	Fingerprint string // empty: identify and fingerprint Compiler
	Compiler    string
}

// ErrInvalidPin reports a --toolchain value that cannot be used.
var ErrInvalidPin = errors.New("invalid --toolchain")

// ParsePin reads `<compiler>` or `<fingerprint>=<compiler>`. The value is
// a fingerprint pin only when what precedes the first '=' is a fingerprint
// (64 lowercase hex digits, the form toolchain.Fingerprint computes), so a
// compiler path containing '=' stays a path.
func ParsePin(s string) (Pin, error) {
	if fp, path, ok := strings.Cut(s, "="); ok && isFingerprint(fp) {
		if path == "" {
			return Pin{}, fmt.Errorf("%w: %q names a fingerprint but no compiler", ErrInvalidPin, s)
		}
		return Pin{Fingerprint: fp, Compiler: path}, nil
	}
	if s == "" {
		return Pin{}, fmt.Errorf("%w: empty value", ErrInvalidPin)
	}
	return Pin{Compiler: s}, nil
}

func isFingerprint(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// surveyedCores are the driver names the survey looks for (pace-node §5.6):
// gcc, g++, clang and clang++, with any target prefix or version suffix.
var surveyedCores = map[string]bool{"gcc": true, "g++": true, "clang": true, "clang++": true}

// flavorOf classifies a compiler by its name, corrected by its banner
// (cc that is really clang), or by the banner alone when the name says
// nothing (a pinned /opt/bin/mycc).
func flavorOf(name string, id *toolchain.Identity) argvet.Flavor {
	d, ok := ccargs.ClassifyDriver(name)
	switch {
	case ok && d.Family() == argvet.FamilyGNU && id != nil && id.Flavor == toolchain.Clang:
		return argvet.FlavorClang
	case ok:
		return d.Flavor
	case id == nil:
		return argvet.FlavorUnknown
	case id.Flavor == toolchain.Clang:
		return argvet.FlavorClang
	}
	return argvet.FlavorGcc
}

// labelOf renders "gcc 12.2.0" from the driver name and its banner.
func labelOf(name, banner string) string {
	base := filepath.Base(name)
	if d, ok := ccargs.ClassifyDriver(name); ok {
		base = d.Core
	}
	label := base
	if v := bannerVersion(banner); v != "" {
		label += " " + v
	}
	if len(label) > verbs.MaxLabel {
		label = label[:verbs.MaxLabel]
	}
	return label
}

// bannerVersion finds the version in a --version banner: the word after
// "version" (clang: "Debian clang version 14.0.6"), else the first word
// after the package parenthesis (gcc: "gcc-12 (Debian 12.2.0-14) 12.2.0",
// "gcc (GCC) 13.2.1 20230801"), else the first word that starts with a
// digit; cut at the first character that is neither a digit nor a dot.
func bannerVersion(banner string) string {
	if i := strings.LastIndexByte(banner, ')'); i >= 0 && !strings.Contains(banner, " version ") {
		banner = banner[i+1:]
	}
	words := strings.Fields(banner)
	pick := ""
	for i, w := range words {
		if w == "version" && i+1 < len(words) {
			pick = words[i+1]
			break
		}
		if pick == "" && w[0] >= '0' && w[0] <= '9' {
			pick = w
		}
	}
	end := strings.IndexFunc(pick, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	if end >= 0 {
		pick = pick[:end]
	}
	return strings.Trim(pick, ".")
}

// toolchainSet is an immutable served set, swapped whole by a survey.
type toolchainSet struct {
	list []Toolchain
	byFP map[string]Toolchain
}

func newToolchainSet(list []Toolchain) *toolchainSet {
	s := &toolchainSet{list: list, byFP: make(map[string]Toolchain, len(list))}
	for _, tc := range list {
		s.byFP[tc.Fingerprint] = tc
	}
	return s
}

func (s *toolchainSet) lookup(fp string) (Toolchain, bool) {
	if s == nil {
		return Toolchain{}, false
	}
	tc, ok := s.byFP[fp]
	return tc, ok
}
