package tier

import (
	"errors"
	"strings"
	"testing"
)

func TestStartupLine(t *testing.T) {
	tests := []struct {
		cfg  Config
		want string
	}{
		{Config{MaxMemory: 8 << 30, Dir: "/var/cache/pace", MaxDisk: 36 << 30, Upstream: "kv.example:6674", UpstreamPassword: "s3cret"},
			"local cache tier (memory 8G none, disk 36G none at /var/cache/pace, upstream kv.example:6674)"},
		{Config{MaxMemory: 512 << 20},
			"local cache tier (memory 512M none, disk off, upstream none)"},
		{Config{Dir: "/srv/c"},
			"local cache tier (memory off, disk unbounded none at /srv/c, upstream none)"},
		{Config{MaxMemory: 1536 << 20, Dir: "/d", MaxDisk: 4097},
			"local cache tier (memory 1536M none, disk 4097 none at /d, upstream none)"},
	}
	for _, tt := range tests {
		got := describe(tt.cfg)
		if got != tt.want {
			t.Errorf("describe(%+v)\n got %q\nwant %q", tt.cfg, got, tt.want)
		}
		if strings.Contains(got, "s3cret") {
			t.Errorf("the startup line shows the password: %q", got)
		}
	}
}

func TestTierStringIsTheStartupLine(t *testing.T) {
	tr := newTier(t, Config{MaxMemory: 64 << 20, Upstream: "127.0.0.1:1"})
	if want := "local cache tier (memory 64M none, disk off, upstream 127.0.0.1:1)"; tr.String() != want {
		t.Fatalf("String() = %q, want %q", tr.String(), want)
	}
}

func TestConfigRefusals(t *testing.T) {
	if Config.Enabled(Config{}) {
		t.Fatal("no memory and no directory is no tier")
	}
	if _, err := New(Config{}); !errors.Is(err, ErrDisabled) {
		t.Fatalf("New without halves: %v", err)
	}
	if _, err := New(Config{MaxMemory: 1 << 20, Upstream: "no-port"}); err == nil || !strings.Contains(err.Error(), "--upstream") {
		t.Fatalf("New with a port-less upstream: %v", err)
	}
	if _, err := New(Config{MaxMemory: -1, Dir: t.TempDir()}); err == nil {
		t.Fatal("a negative budget was accepted")
	}
}

// The disk half is claimed exclusively: a second tier on the same directory is refused.
func TestSecondTierOnTheSameDirectoryIsRefused(t *testing.T) {
	dir := t.TempDir()
	newTier(t, Config{Dir: dir})
	if _, err := New(Config{Dir: dir, HostAddrs: noHostAddrs}); err == nil || !strings.Contains(err.Error(), dir) {
		t.Fatalf("second open: %v (want a refusal naming %s)", err, dir)
	}
}
