package argvet

import (
	"errors"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

var allFlavors = []Flavor{FlavorGcc, FlavorClang, FlavorCl, FlavorClangCl}

// allSpellings gathers every row and refusal spelling, so generated arguments land near the
// rows rather than in random noise.
func allSpellings() []string {
	var out []string
	for _, groups := range []map[string][]row{gnuGroups, msvcGroups} {
		for _, rows := range groups {
			for _, r := range rows {
				out = append(out, r.spelling)
			}
		}
	}
	for _, list := range [][]string{denyAnyFamily, denyGNU, denyMSVC, sideArtefactGNU, sideArtefactMSVC} {
		out = append(out, list...)
	}
	return append(out, "x", "-target=", "target=", "TP", "TC")
}

func genArgNear(spellings []string) *rapid.Generator[string] {
	return rapid.Custom(func(t *rapid.T) string {
		intro := rapid.SampledFrom([]string{"-", "/", "--", ""}).Draw(t, "intro")
		base := rapid.SampledFrom(spellings).Draw(t, "base")
		tail := rapid.StringOf(rapid.SampledFrom([]rune("abcxyz019=,.-_+:/\\ "))).Draw(t, "tail")
		return intro + base + tail
	})
}

// pace-wire §3.10 / pace-node §5.5: nothing with a path separator after its one introducer
// is ever accepted but a GNU -D's value (macro text); the preprocessed-language spellings
// carry none.
func TestPropertyNoSeparatorIsEverAccepted(t *testing.T) {
	spellings := allSpellings()
	rapid.Check(t, func(t *rapid.T) {
		f := rapid.SampledFrom(allFlavors).Draw(t, "flavor")
		arg := genArgNear(spellings).Draw(t, "arg")
		sep := rapid.SampledFrom([]string{"/", `\`}).Draw(t, "sep")
		if len(arg) == 0 {
			arg = "-"
		}
		at := rapid.IntRange(1, len(arg)).Draw(t, "at")
		arg = arg[:at] + sep + arg[at:]
		err := Vet(f, []string{arg})
		if err == nil && !contains(f.PreprocessedLanguages(), arg) && !MacroDefinition(f.Family(), arg) {
			t.Fatalf("%s accepted %q, which has a separator after its introducer", f, arg)
		}
		if err != nil && !errors.Is(err, ErrRejectedArgument) {
			t.Fatalf("%s: %q refused with an untyped error %v", f, arg, err)
		}
	})
}

// Whatever Vet accepts passes the hard-refusal screen: no allowlist row or extension reopens
// what a denial row closes.
func TestPropertyAcceptedNeverHitsAHardRefusal(t *testing.T) {
	spellings := allSpellings()
	rapid.Check(t, func(t *rapid.T) {
		f := rapid.SampledFrom(allFlavors).Draw(t, "flavor")
		exts := rapid.SliceOfN(genArgNear(spellings), 0, 4).Draw(t, "extensions")
		p, err := NewPolicy(exts)
		if err != nil {
			p = &defaultPolicy
		}
		arg := genArgNear(spellings).Draw(t, "arg")
		if p.Vet(f, []string{arg}) != nil || arg == "" || contains(f.PreprocessedLanguages(), arg) {
			return
		}
		if f.IsClang() && isTargetFlag(arg) {
			return
		}
		if err := screenOne(f.Family(), 0, arg); err != nil {
			t.Fatalf("%s accepted %q but the screen refuses it: %v", f, arg, err)
		}
		if strings.HasPrefix(arg, "@") {
			t.Fatalf("%s accepted response file %q", f, arg)
		}
	})
}
