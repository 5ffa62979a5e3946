package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/cc"
	"github.com/buildfleet/buildfleet/internal/pace/ccfront"
	"github.com/buildfleet/buildfleet/internal/pace/ccstats"
	"github.com/buildfleet/buildfleet/internal/pace/kv"
)

// TestMain lets the test binary stand in for pace-cc (PACE_CC_AS_MAIN=1), under its own name
// or under a compiler's name through a masquerade symlink, and for pace-cc-full when the
// front hands over (it names itself in PACE_CC_FRONT, and PACE_CC_FULL points back here).
func TestMain(m *testing.M) {
	if os.Getenv("PACE_CC_AS_MAIN") == "1" {
		if os.Getenv(ccfront.FrontEnv) != "" {
			os.Exit(cc.Main(cc.ProcessIO()))
		}
		main()
		return
	}
	os.Exit(m.Run())
}

// startKV runs a real pace-kv on loopback for one test.
func startKV(t *testing.T) string {
	t.Helper()
	srv, err := kv.New(kv.Config{Listen: "127.0.0.1:0", MaxMemory: 256 << 20})
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	})
	return srv.Addr().String()
}

// env is one build environment: a cache address, a state directory and extra variables.
type env struct {
	t     *testing.T
	addr  string
	home  string
	extra []string
}

func newEnv(t *testing.T) *env {
	return &env{t: t, addr: startKV(t), home: t.TempDir()}
}

func (e *env) vars() []string {
	base := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + e.home, "PACE_CC_AS_MAIN=1", "LC_ALL=C", "PACE_ADDR=" + e.addr,
		"PACE_CC_FULL=" + os.Args[0]}
	return append(base, e.extra...)
}

type result struct {
	status         int
	stdout, stderr string
}

// paceCC runs pace-cc in dir with args (launcher form unless argv0 is given).
func (e *env) paceCC(dir string, args ...string) result {
	e.t.Helper()
	return e.run(dir, os.Args[0], args...)
}

func (e *env) run(dir, prog string, args ...string) result {
	e.t.Helper()
	cmd := exec.Command(prog, args...)
	cmd.Dir, cmd.Env = dir, e.vars()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	status := 0
	if ee, ok := err.(*exec.ExitError); ok {
		status = ee.ExitCode()
	} else if err != nil {
		e.t.Fatalf("running %s: %v", prog, err)
	}
	return result{status, out.String(), errb.String()}
}

// plain runs the real compiler directly.
func plain(t *testing.T, dir, compiler string, args ...string) result {
	t.Helper()
	cmd := exec.Command(compiler, args...)
	cmd.Dir, cmd.Env = dir, []string{"PATH=" + os.Getenv("PATH"), "LC_ALL=C"}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	status := 0
	if ee, ok := err.(*exec.ExitError); ok {
		status = ee.ExitCode()
	}
	return result{status, out.String(), errb.String()}
}

// stats folds this environment's invocation log.
func (e *env) stats() ccstats.Summary {
	e.t.Helper()
	s, err := ccstats.Read(filepath.Join(e.home, ".local", "state", "pace-cc"))
	if err != nil {
		e.t.Fatal(err)
	}
	return s
}

// lastOutcome is the outcome (and via) of the latest invocation.
func (e *env) lastOutcome() string {
	e.t.Helper()
	b, _ := os.ReadFile(filepath.Join(e.home, ".local", "state", "pace-cc", ccstats.LogName))
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	last := lines[len(lines)-1]
	for _, o := range []string{`"outcome":"hit","via":"direct"`, `"outcome":"hit","via":"preprocessed"`} {
		if strings.Contains(last, o) {
			return map[bool]string{true: "hit-direct", false: "hit-preprocessed"}[strings.Contains(o, "direct")]
		}
	}
	for _, o := range []string{"miss", "uncacheable", "passthrough", "unavailable", "fallback", "failed", "hit"} {
		if strings.Contains(last, `"outcome":"`+o+`"`) {
			return o
		}
	}
	return last
}

// write creates files (path → content) under dir.
func write(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func read(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// sameBytes fails unless the two files are byte-identical.
func sameBytes(t *testing.T, a, b string) {
	t.Helper()
	if !bytes.Equal(read(t, a), read(t, b)) {
		t.Fatalf("%s and %s differ", a, b)
	}
}
