package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/kvclient"
	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// runMain runs pace-kv to its exit and returns the exit code and stderr.
func runMain(t *testing.T, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "PACE_KV_AS_MAIN=1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), stderr.String()
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0, stderr.String()
}

func TestBlankPasswordIsRefusedAtStart(t *testing.T) {
	dir := t.TempDir()
	for _, content := range []string{"", "\n", " \t\r\n"} {
		pw := filepath.Join(dir, "pw")
		os.WriteFile(pw, []byte(content), 0o600)
		code, stderr := runMain(t, "--listen=127.0.0.1:0", "--metrics=", "--requirepass-file="+pw)
		if code != 2 || !strings.Contains(stderr, "empty or only whitespace") || !strings.Contains(stderr, "--no-auth") {
			t.Errorf("password file %q: exit %d, %q", content, code, stderr)
		}
	}
	if code, stderr := runMain(t, "--listen=0.0.0.0:0", "--metrics="); code != 2 || !strings.Contains(stderr, "without a password") {
		t.Errorf("wildcard listener without a password: exit %d, %q", code, stderr)
	}
	if code, stderr := runMain(t, "--listen=127.0.0.1:0", "--metrics=", "--requirepass="); code != 2 || !strings.Contains(stderr, "empty or only whitespace") {
		t.Errorf("empty --requirepass: exit %d, %q", code, stderr)
	}
}

func TestBlankPasswordOnReloadKeepsTheOldOne(t *testing.T) {
	pw := filepath.Join(t.TempDir(), "pw")
	os.WriteFile(pw, []byte("first\n"), 0o600)
	p := spawn(t, "--requirepass-file="+pw)
	storeWith := func(secret string) error {
		return kvclient.Store(context.Background(), kvclient.Options{Addr: p.addr, Password: secret, Timeout: 5 * time.Second},
			"k", kvclient.StoreArgs{}, valueFor("k"))
	}
	for i, content := range []string{"", "\n", "  \n"} {
		os.WriteFile(pw, []byte(content), 0o600)
		p.cmd.Process.Signal(syscall.SIGHUP)
		waitLogged(t, p, "reload refused", i+1)
		if err := storeWith(""); !isUnauthenticated(err) {
			t.Fatalf("STORE without a password after reloading %q: %v", content, err)
		}
		if err := storeWith("first"); err != nil {
			t.Fatalf("the old password after reloading %q: %v", content, err)
		}
	}
	if p.logged("empty or only whitespace") != 3 {
		t.Fatalf("refusals do not say why:\n%s", strings.Join(p.logs, "\n"))
	}
}

func isUnauthenticated(err error) bool {
	var ae *kvclient.AuthError
	var r wire.Refusal
	return errors.As(err, &ae) && ae.Refusal.Code == wire.CodeUnauthenticated ||
		errors.As(err, &r) && r.Code == wire.CodeUnauthenticated
}

// waitLogged waits until s has been logged n times.
func waitLogged(t *testing.T, p *proc, s string, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for p.logged(s) < n {
		if time.Now().After(deadline) {
			t.Fatalf("%q not logged %d times:\n%s", s, n, strings.Join(p.logs, "\n"))
		}
		time.Sleep(10 * time.Millisecond)
	}
}
