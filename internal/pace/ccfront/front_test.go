package ccfront_test

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/ccfront"
)

type execCall struct {
	path      string
	argv, env []string
}

// drive runs the front with env and argv, recording the programs it execs; the first exec
// fails when fullMissing.
func drive(t *testing.T, argv []string, env map[string]string, fullMissing bool) (int, []execCall, string) {
	t.Helper()
	var calls []execCall
	var stderr bytes.Buffer
	environ := []string{"PACE_CC_FRONT=/stale"}
	for k, v := range env {
		environ = append(environ, k+"="+v)
	}
	p := ccfront.IO{Args: argv, Lookup: lookupIn(env), Environ: environ, Stdout: &bytes.Buffer{}, Stderr: &stderr,
		Cwd: t.TempDir(), Self: "/opt/pace/bin/pace-cc", Now: time.Now,
		Exec: func(path string, argv, env []string) error {
			calls = append(calls, execCall{path, argv, env})
			if fullMissing && len(calls) == 1 {
				return errors.New("no such file")
			}
			return nil // a real exec does not return; the test stops here
		}}
	status := ccfront.Main(p)
	return status, calls, stderr.String()
}

func TestHandsOverUnchanged(t *testing.T) {
	home := t.TempDir()
	for name, argv := range map[string][]string{
		"launcher flag": {"pace-cc", "--show-stats"},
		"no arguments":  {"pace-cc"},
		"no memo":       {"pace-cc", "gcc", "-c", "a.c", "-o", "a.o"},
		"masquerade":    {"/usr/lib/pace/gcc", "-c", "a.c", "-o", "a.o"},
	} {
		_, calls, _ := drive(t, argv, map[string]string{"HOME": home, "PATH": "/usr/bin:/bin"}, false)
		if len(calls) == 0 {
			t.Fatalf("%s: nothing exec'd", name)
		}
		c := calls[0]
		if c.path != "/opt/pace/bin/pace-cc-full" || !slices.Equal(c.argv, argv) {
			t.Errorf("%s: exec %s %q", name, c.path, c.argv)
		}
		fronts := 0
		for _, kv := range c.env {
			if strings.HasPrefix(kv, ccfront.FrontEnv+"=") {
				fronts++
				if kv != ccfront.FrontEnv+"=/opt/pace/bin/pace-cc" {
					t.Errorf("%s: %s", name, kv)
				}
			}
		}
		if fronts != 1 {
			t.Errorf("%s: %d %s entries", name, fronts, ccfront.FrontEnv)
		}
	}
}

func TestFullNamedByEnvironment(t *testing.T) {
	_, calls, _ := drive(t, []string{"pace-cc", "-s"}, map[string]string{"HOME": "/h", "PACE_CC_FULL": "/elsewhere/full"}, false)
	if len(calls) != 1 || calls[0].path != "/elsewhere/full" {
		t.Fatalf("%+v", calls)
	}
}

// Without pace-cc-full a compile still runs, uncached; a launcher flag cannot and fails.
func TestWithoutFullTheCompilerRunsUncached(t *testing.T) {
	status, calls, stderr := drive(t, []string{"pace-cc", "gcc", "-c", "a.c", "-o", "a.o"},
		map[string]string{"HOME": t.TempDir(), "PATH": "/usr/bin:/bin"}, true)
	if len(calls) != 2 || calls[1].path != "/usr/bin/gcc" || !slices.Equal(calls[1].argv, []string{"/usr/bin/gcc", "-c", "a.c", "-o", "a.o"}) {
		t.Fatalf("calls %+v, stderr %s", calls, stderr)
	}
	if status, _, _ := drive(t, []string{"pace-cc", "-s"}, map[string]string{"HOME": "/h"}, true); status != 1 {
		t.Fatalf("a launcher flag without pace-cc-full: status %d", status)
	}
	_ = status
}
