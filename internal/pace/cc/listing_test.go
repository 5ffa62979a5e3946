package cc

import (
	"bytes"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/buildfleet/buildfleet/internal/pace/ccargs"
	"github.com/buildfleet/buildfleet/internal/pace/ccstats"
)

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("broken pipe") }

// A hit whose rules cannot reach standard output fails the command, as the compiler's own
// write would, rather than run the listing a second time after part of it went out.
func TestListingHitToABrokenStdoutFails(t *testing.T) {
	var stderr bytes.Buffer
	r := &run{stdout: failingWriter{}, stderr: &stderr}
	if status := r.serveListing(&ccargs.Listing{}, []byte("a.o: a.c\n")); status != 1 || r.rec.Outcome != ccstats.Failed {
		t.Fatalf("status %d, outcome %s", status, r.rec.Outcome)
	}
	if !strings.Contains(stderr.String(), "broken pipe") {
		t.Fatalf("stderr %q does not say why", stderr.String())
	}
}

// A hit whose named file cannot be written runs the command uncached: the compiler then
// writes it, or says why it cannot.
func TestListingHitToAnUnwritableFileRunsTheCompiler(t *testing.T) {
	var out bytes.Buffer
	r := &run{compiler: "/bin/echo", args: []string{"ran"}, cwd: t.TempDir(), stdout: &out, stderr: &out}
	l := &ccargs.Listing{Dest: filepath.Join("no", "such", "dir", "a.d")}
	if status := r.serveListing(l, []byte("a.o: a.c\n")); status != 0 || r.rec.Outcome != ccstats.Fallback {
		t.Fatalf("status %d, outcome %s", status, r.rec.Outcome)
	}
	if out.String() != "ran\n" {
		t.Fatalf("the compiler did not run in its place: %q", out.String())
	}
}
