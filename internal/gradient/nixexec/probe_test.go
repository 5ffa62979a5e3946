package nixexec_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/nixexec"
	"github.com/buildfleet/buildfleet/internal/gradient/nixexec/nixexectest"
)

func probeWith(t *testing.T, nixConfig string, passedBefore func(string) bool) nixexec.Probe {
	t.Helper()
	nixexectest.RequireNix(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var env []string
	if nixConfig != "" {
		env = []string{"NIX_CONFIG=" + nixConfig}
	}
	return nixexec.New(nixexec.Options{Env: env}).RunProbe(ctx, passedBefore)
}

func TestProbeOfAWorkingNix(t *testing.T) {
	p := probeWith(t, "", nil)
	if !p.Healthy() || !p.BuiltNow {
		t.Fatalf("probe %+v: want healthy, built now", p)
	}
	if !strings.HasPrefix(p.Version, "nix (Nix) ") || len(p.ConfigKey) != 64 {
		t.Errorf("version %q, key %q", p.Version, p.ConfigKey)
	}
	again := probeWith(t, "", func(key string) bool { return key == p.ConfigKey })
	if !again.Healthy() || again.BuiltNow || again.ConfigKey != p.ConfigKey {
		t.Errorf("a remembered pass: %+v; want healthy without building, same key", again)
	}
	other := probeWith(t, "cores = 3", func(key string) bool { return key == p.ConfigKey })
	if other.ConfigKey == p.ConfigKey || !other.BuiltNow {
		t.Errorf("another configuration kept the key %q or skipped the build", other.ConfigKey)
	}
}

func TestProbeNamesWhatIsBroken(t *testing.T) {
	for _, tc := range []struct {
		name, config, what, fix string
	}{
		{"no build users", "build-users-group = gradient-no-such-group", "'gradient-no-such-group' specified in 'build-users-group' does not exist", "build users"},
		{"no shell in the sandbox", "sandbox-paths =", "the build sandbox has no /bin/sh", "busybox"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := probeWith(t, tc.config, nil)
			if p.Fetch != nil || p.Eval != nil {
				t.Errorf("fetch %v, eval %v: want both working", p.Fetch, p.Eval)
			}
			if p.Build == nil || !strings.Contains(p.Build.What, tc.what) || !strings.Contains(p.Build.Fix, tc.fix) {
				t.Fatalf("build problem %v; want %q, fix mentioning %q", p.Build, tc.what, tc.fix)
			}
		})
	}
}

func TestProbeOfAStoreItCannotWrite(t *testing.T) {
	p := probeWith(t, "store = /proc/gradient-no-store", nil)
	if p.Eval == nil || p.Build == nil || p.Fetch == nil {
		t.Fatalf("probe %+v: want fetch, eval and build all unavailable", p)
	}
	if p.Eval != p.Build {
		t.Errorf("eval and build fail on different problems: %v / %v", p.Eval, p.Build)
	}
}
