package argvet

import (
	"strings"
	"testing"
)

var gnuGroups = map[string][]row{
	"optimisation": gnuOptimisation(), "language": gnuLanguage(), "defines": gnuDefines(),
	"warnings": gnuWarnings(), "machine": gnuMachine(), "debug": gnuDebug(), "f bare": gnuFBare(),
	"f valued": gnuFValued(), "param": gnuParam(), "misc": gnuMisc(),
}

var msvcGroups = map[string][]row{
	"optimisation": msvcOptimisation(), "language": msvcLanguage(), "defines": msvcDefines(),
	"warnings": msvcWarnings(), "machine": msvcMachine(), "codegen": msvcCodegen(), "misc": msvcMisc(),
}

// Every -f row names one whole option (pace-wire §3.10): bare, or valued
// with the option name ending in '=' and a closed check on the value. A prefix row for -f
// would admit -fmodule-mapper= or -fpass-plugin= in a future compiler release.
func TestEveryFRowIsAnExactSpelling(t *testing.T) {
	count := 0
	for name, rows := range gnuGroups {
		for _, r := range rows {
			if !strings.HasPrefix(r.spelling, "f") {
				continue
			}
			count++
			switch r.kind {
			case bare:
			case valued:
				if !strings.HasSuffix(r.spelling, "=") || r.value == nil {
					t.Errorf("%s: -%s is valued but not an exact option name with a value check", name, r.spelling)
				}
			default:
				t.Errorf("%s: -%s is a prefix row; -f rows must be enumerated", name, r.spelling)
			}
		}
	}
	for _, r := range gnuAllow().others {
		if r.kind == prefix && strings.HasPrefix(r.spelling, "f") {
			t.Errorf("the built GNU table holds -f prefix row -%s", r.spelling)
		}
	}
	if count < 300 {
		t.Errorf("only %d -f rows; the enumeration lost rows", count)
	}
}

// Prefix rows are exactly the categories pace-wire §3.10 allows as prefixes.
func TestPrefixRowsAreTheSpecsOnly(t *testing.T) {
	allowed := map[string]bool{"std=": true, "D": true, "U": true, "W": true, "m": true}
	for name, rows := range gnuGroups {
		for _, r := range rows {
			if r.kind == prefix && !allowed[r.spelling] {
				t.Errorf("GNU %s: unexpected prefix row -%s", name, r.spelling)
			}
		}
	}
	msvcAllowed := map[string]bool{"std:": true, "D": true, "U": true, "W": true, "wd": true, "we": true,
		"wo": true, "w1": true, "w2": true, "w3": true, "w4": true, "arch:": true, "favor:": true,
		"EH": true, "Zc:": true, "Zp": true, "RTC": true, "fp:": true, "guard:": true,
		"diagnostics:": true, "errorReport:": true, "openmp:": true, "source-charset:": true,
		"execution-charset:": true, "constexpr:": true, "vd": true, "vm": true, "Gs": true, "await:": true}
	for name, rows := range msvcGroups {
		for _, r := range rows {
			if r.kind == prefix && !msvcAllowed[r.spelling] {
				t.Errorf("MSVC %s: unexpected prefix row /%s", name, r.spelling)
			}
		}
	}
}

// No allowlist row may itself be refused before it is reached: a row shadowed by a denial or
// side-artefact row is dead and misleads whoever reads the table.
func TestNoAllowRowIsShadowedByARefusal(t *testing.T) {
	check := func(f Family, groups map[string][]row) {
		for name, rows := range groups {
			for _, r := range rows {
				if rule, hit := hardRefusal(f, r.spelling); hit {
					t.Errorf("%s %s: row %q is shadowed by %s", f, name, r.spelling, rule)
				}
			}
		}
	}
	check(FamilyGNU, gnuGroups)
	check(FamilyMSVC, msvcGroups)
}

// Every bare row is accepted as spelled, through the public entry point.
func TestEveryBareRowIsAccepted(t *testing.T) {
	for name, rows := range gnuGroups {
		for _, r := range rows {
			if r.kind != bare {
				continue
			}
			for _, f := range gnuFlavors {
				if err := Vet(f, []string{"-" + r.spelling}); err != nil {
					t.Errorf("%s %s: -%s refused: %v", f, name, r.spelling, err)
				}
			}
		}
	}
	for name, rows := range msvcGroups {
		for _, r := range rows {
			if r.kind != bare {
				continue
			}
			if err := Vet(FlavorCl, []string{"/" + r.spelling, "-" + r.spelling}); err != nil {
				t.Errorf("cl %s: /%s refused: %v", name, r.spelling, err)
			}
		}
	}
}
