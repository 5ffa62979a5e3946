package argvet

import (
	"errors"
	"strings"
	"testing"
)

// FuzzVet feeds NUL-separated argument lists; the first byte picks the worker's flavor. Vet
// must never panic, must refuse with a RejectedError naming an argument it was given, and
// must accept nothing that carries a separator after its introducer, but a -D's value.
func FuzzVet(f *testing.F) {
	for _, seed := range []string{
		"\x01-O2\x00-fPIC\x00-x\x00cpp-output",
		"\x02--target=x86_64-pc-linux-gnu\x00-Xclang\x00-load\x00-Xclang\x00x.so",
		"\x01-fplugin=x.so",
		"\x03/O2\x00/TP\x00/Fo/tmp/x.obj",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		flavor := allFlavors[int(data[0])%len(allFlavors)]
		args := strings.Split(string(data[1:]), "\x00")
		err := Vet(flavor, args)
		if err == nil {
			for _, a := range args {
				n := introducerLen(flavor.Family(), a)
				if n > 0 && strings.ContainsAny(a[n:], `/\`) && !contains(flavor.PreprocessedLanguages(), a) &&
					!MacroDefinition(flavor.Family(), a) {
					t.Fatalf("%s accepted %q", flavor, a)
				}
			}
			return
		}
		var re *RejectedError
		if !errors.As(err, &re) || re.Index < 0 || re.Index >= len(args) || re.Arg != SanitizeArg(args[re.Index]) {
			t.Fatalf("refusal %v does not name one of %q", err, args)
		}
		if len(re.Arg) > MaxNamedArgLen {
			t.Fatalf("named argument longer than %d: %q", MaxNamedArgLen, re.Arg)
		}
	})
}
