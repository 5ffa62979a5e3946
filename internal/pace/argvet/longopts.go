package argvet

import "strings"

// gcc's driver still reads "--name" spellings the option table does not list through its old
// option map (checked against gcc 12 with -###): --warn-X is -WX, --machine-X is -mX, --debug
// and --debug=X are -g and -gX, --optimize[=X] is -O[X], a few words are their short forms,
// and every other --X is -fX, so --plugin=x.so loads a plugin and --dump-tree-all dumps.

var longWords = map[string]string{
	"--all-warnings": "-Wall", "--extra-warnings": "-Wextra", "--ansi": "-ansi",
	"--pedantic": "-Wpedantic", "--pedantic-errors": "-pedantic-errors", "--no-warnings": "-w",
	"--trigraphs": "-trigraphs", "--traditional": "-traditional", "--classic-c": "-traditional",
	"--traditional-cpp": "-traditional-cpp", "--pipe": "-pipe", "--profile": "-p",
	"--time": "-time", "--shared": "-shared", "--static": "-static", "--pie": "-pie",
	"--symbolic": "-symbolic", "--pass-exit-codes": "-pass-exit-codes",
	"--no-canonical-prefixes": "-no-canonical-prefixes", "--no-integrated-cpp": "-no-integrated-cpp",
	"--no-standard-libraries": "-nostdlib", "--no-precompiled-includes": "-noprecomp",
	"--debug": "-g", "--optimize": "-O",
}

var longPrefixes = []struct{ long, short string }{
	{"--warn-", "-W"}, {"--machine-", "-m"}, {"--debug=", "-g"}, {"--optimize=", "-O"},
}

// GNUShortForm returns the short spelling gcc reads a long option as; arguments that do not
// start with "--" are returned unchanged. The worker screens hard refusals under both
// spellings, and pace-cc classifies by the short one.
func GNUShortForm(a string) string {
	if !strings.HasPrefix(a, "--") || len(a) == 2 {
		return a
	}
	if s, ok := longWords[a]; ok {
		return s
	}
	for _, p := range longPrefixes {
		if rest, ok := strings.CutPrefix(a, p.long); ok {
			return p.short + rest
		}
	}
	return "-f" + a[2:]
}
