package verbs

import (
	"regexp"
	"testing"

	"github.com/buildfleet/buildfleet/internal/pace/wire"
	"pgregory.net/rapid"
)

var correlationShape = regexp.MustCompile(`^[0-9a-f]{32}$`)

// TestCorrelationCoversEveryBoundField: changing any field the digest
// covers (pace-wire §3.9.2 step 4) changes it; the lease token, the codec
// list and the envelope are not covered, so a reply verifies whichever
// codec carried the source.
func TestCorrelationCoversEveryBoundField(t *testing.T) {
	base := CompileRequest{
		LeaseToken: "tok", Fingerprint: "fp", Args: []string{"-O2", "-x", "cpp-output"},
		SourceName: "a.c", CompileDir: "/w", CompileDirReplacement: ".", SourceRoot: "/s", SourceRootReplacement: "/src",
	}
	src := []byte("int x;\n")
	want := base.Correlation(src)
	if !correlationShape.MatchString(want) {
		t.Fatalf("correlation %q is not 32 lowercase hex digits", want)
	}
	changes := map[string]func(*CompileRequest){
		"fingerprint":           func(r *CompileRequest) { r.Fingerprint = "fq" },
		"sourceName":            func(r *CompileRequest) { r.SourceName = "b.c" },
		"compileDir":            func(r *CompileRequest) { r.CompileDir = "/x" },
		"compileDirReplacement": func(r *CompileRequest) { r.CompileDirReplacement = "/y" },
		"sourceRoot":            func(r *CompileRequest) { r.SourceRoot = "/t" },
		"sourceRootReplacement": func(r *CompileRequest) { r.SourceRootReplacement = "/u" },
		"args order":            func(r *CompileRequest) { r.Args = []string{"-x", "cpp-output", "-O2"} },
		"args joined":           func(r *CompileRequest) { r.Args = []string{"-O2 -x", "cpp-output"} },
	}
	for name, change := range changes {
		r := base
		change(&r)
		if r.Correlation(src) == want {
			t.Errorf("changing %s left the correlation unchanged", name)
		}
	}
	if base.Correlation([]byte("int y;\n")) == want {
		t.Error("changing the source left the correlation unchanged")
	}
	r := base
	r.LeaseToken, r.Source = "other", []byte{1, 2, 3}
	r.Codecs = wire.NewCodecList(wire.CodecZstd)
	if r.Correlation(src) != want {
		t.Error("the token or envelope changed the correlation; only what the compile depends on may")
	}
}

// TestCorrelationFramingIsUnambiguous: moving bytes between adjacent
// fields or between arguments never yields the same digest.
func TestCorrelationFramingIsUnambiguous(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		a := CompileRequest{
			Fingerprint: rapid.String().Draw(t, "fp"),
			SourceName:  rapid.String().Draw(t, "name"),
			Args:        rapid.SliceOfN(rapid.String(), 0, 4).Draw(t, "args"),
		}
		src := []byte(rapid.String().Draw(t, "src"))
		b := a
		b.Args = append([]string(nil), a.Args...)
		switch rapid.IntRange(0, 2).Draw(t, "move") {
		case 0:
			b.Fingerprint, b.SourceName = a.Fingerprint+"x", a.SourceName
		case 1:
			b.Args = append(b.Args, "")
		case 2:
			b.SourceName = a.SourceName + "\x00"
		}
		if a.Correlation(src) == b.Correlation(src) {
			t.Fatalf("distinct requests share a correlation: %+v vs %+v", a, b)
		}
	})
}
