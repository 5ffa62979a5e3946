package nixexectest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// gateDir holds the gates of this test process's flakes. The sandbox sees it (and nothing
// else of the host's /tmp) through extra-sandbox-paths; UseProjectConfig makes it.
var gateDir string

// GateDir is the directory the build sandbox sees (made by UseProjectConfig): a builder can
// leave a marker there that a test reads.
func GateDir() string { return gateDir }

// UseProjectConfig points every nix this test process and its children run at the
// repository's own Nix configuration, scripts/nix/nix.conf (NIX_CONF_DIR, and no user
// configuration files), so the host's nix.conf — or its absence, as on a fresh Debian
// machine — never decides whether a test passes. It also makes the gate directory and lets
// the build sandbox see it. Call it from TestMain before any test runs, and the returned
// cleanup after them.
func UseProjectConfig() (cleanup func(), err error) {
	root, err := repoRoot()
	if err != nil {
		return nil, err
	}
	gateDir, err = os.MkdirTemp("", "gradient-gates-")
	if err != nil {
		return nil, fmt.Errorf("nixexectest: gate directory: %w", err)
	}
	cleanup = func() { os.RemoveAll(gateDir) }
	if err := os.Chmod(gateDir, 0o755); err != nil {
		cleanup()
		return nil, fmt.Errorf("nixexectest: gate directory: %w", err)
	}
	env := map[string]string{
		"NIX_CONF_DIR":        filepath.Join(root, "scripts", "nix"),
		"NIX_USER_CONF_FILES": "",
		"NIX_CONFIG":          "extra-sandbox-paths = " + gateDir,
	}
	for k, v := range env {
		if err := os.Setenv(k, v); err != nil {
			cleanup()
			return nil, fmt.Errorf("nixexectest: %s: %w", k, err)
		}
	}
	return cleanup, nil
}

// Main is TestMain for a package whose tests run nix: the project's Nix configuration, the
// tests, and the gate directory removed afterwards.
func Main(m *testing.M) {
	cleanup, err := UseProjectConfig()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	cleanup()
	os.Exit(code)
}

// repoRoot is the directory holding go.mod above the working directory (a test runs in its
// package's directory).
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("nixexectest: no go.mod above the working directory")
		}
		dir = parent
	}
}
