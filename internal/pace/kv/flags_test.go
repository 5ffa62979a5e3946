package kv

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestConfigFileAndCommandLine(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "kv.conf")
	os.WriteFile(cfg, []byte("# comment\nmax-memory = 1GiB\nlog-level = debug\n"), 0o644)
	o, err := ParseArgs([]string{"--config=" + cfg, "--log-level=warn"})
	if err != nil {
		t.Fatal(err)
	}
	if o.Config.MaxMemory != 1<<30 || o.LogLevel != "warn" {
		t.Fatalf("max-memory %d, log-level %s", o.Config.MaxMemory, o.LogLevel)
	}
	os.WriteFile(cfg, []byte("nonsense line\n"), 0o644)
	if _, err := ParseArgs([]string{"--config=" + cfg}); err == nil {
		t.Fatal("malformed config accepted")
	}
}

func TestConnectionFlagsAndTheirDefaults(t *testing.T) {
	o, err := ParseArgs(nil)
	if err != nil {
		t.Fatal(err)
	}
	c := o.Config
	if c.MaxConns != 1024 || c.MaxConnsPerAddr != 128 || c.IdleTimeout.Seconds() != 60 ||
		c.FrameTimeout.Seconds() != 10 || c.AuthTimeout.Seconds() != 10 || c.MaxInflight != 512<<20 {
		t.Fatalf("defaults %+v", c)
	}
	o, err = ParseArgs([]string{"--max-connections=10", "--max-connections-per-address=2", "--idle-timeout=2s",
		"--frame-timeout=1s", "--auth-timeout=500ms", "--max-inflight=64MiB"})
	if err != nil {
		t.Fatal(err)
	}
	c = o.Config
	if c.MaxConns != 10 || c.MaxConnsPerAddr != 2 || c.IdleTimeout.Seconds() != 2 ||
		c.FrameTimeout.Seconds() != 1 || c.AuthTimeout.Milliseconds() != 500 || c.MaxInflight != 64<<20 {
		t.Fatalf("flags %+v", c)
	}
	if _, err := ParseArgs([]string{"--max-inflight=0"}); err == nil {
		t.Fatal("an in-flight budget of 0 accepted")
	}
	if got := (Config{MaxMemory: 64 << 20, MaxInflight: 256 << 20}).MemoryCeiling(); got != (64+256+32)<<20+MemoryOverhead {
		t.Fatalf("memory ceiling %d", got)
	}
}

// A configuration slip never opens the cache: a blank password is an error, not "none".
func TestPasswordRules(t *testing.T) {
	dir := t.TempDir()
	file := func(content string) string {
		p := filepath.Join(dir, strings.NewReplacer("\n", "n", " ", "s", "\t", "t").Replace(content)+".pw")
		os.WriteFile(p, []byte(content), 0o600)
		return p
	}
	tests := []struct {
		args    []string
		secret  string
		wantErr string
	}{
		{args: nil},
		{args: []string{"--requirepass-file=" + file("hunter2\n")}, secret: "hunter2"},
		{args: []string{"--requirepass-file=" + file(" spaced pass\r\n")}, secret: " spaced pass"},
		{args: []string{"--requirepass=s3"}, secret: "s3"},
		{args: []string{"--listen=0.0.0.0:6674", "--requirepass=s3"}, secret: "s3"},
		{args: []string{"--listen=0.0.0.0:6674", "--no-auth"}},
		{args: []string{"--listen=localhost:6674"}},
		{args: []string{"--requirepass-file=" + file("")}, wantErr: "empty or only whitespace"},
		{args: []string{"--requirepass-file=" + file("\n")}, wantErr: "empty or only whitespace"},
		{args: []string{"--requirepass-file=" + file(" \t \n")}, wantErr: "empty or only whitespace"},
		{args: []string{"--requirepass-file=" + filepath.Join(dir, "absent")}, wantErr: "reading --requirepass-file"},
		{args: []string{"--requirepass="}, wantErr: "empty or only whitespace"},
		{args: []string{"--requirepass=  "}, wantErr: "empty or only whitespace"},
		{args: []string{"--requirepass=a", "--requirepass-file=" + file("b\n")}, wantErr: "exclusive"},
		{args: []string{"--no-auth", "--requirepass-file=" + file("b\n")}, wantErr: "--no-auth turns authentication off"},
		{args: []string{"--listen=0.0.0.0:6674"}, wantErr: "without a password"},
		{args: []string{"--listen=[::]:6674"}, wantErr: "without a password"},
		{args: []string{"--listen=:6674"}, wantErr: "without a password"},
	}
	for _, tt := range tests {
		o, err := ParseArgs(tt.args)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%v: %v, want an error containing %q", tt.args, err, tt.wantErr)
			}
			continue
		}
		if err != nil || o.Config.Password != tt.secret {
			t.Errorf("%v: password %q, err %v; want %q", tt.args, o.Config.Password, err, tt.secret)
		}
	}
	if _, err := New(Config{Listen: "127.0.0.1:0", MaxMemory: 1 << 20, Password: " \n"}); !errors.Is(err, ErrBlankPassword) {
		t.Fatalf("New with a blank password: %v", err)
	}
}

func TestReloadNeverDropsThePasswordByAccident(t *testing.T) {
	srv := start(t, Config{Password: "first"})
	if _, err := srv.Reload(Options{}); err == nil || !srv.PasswordRequired() {
		t.Fatal("a configuration naming no password dropped the one in force")
	}
	if auth, err := srv.Reload(Options{Config: Config{Password: "second"}}); err != nil || !auth {
		t.Fatalf("rotation: %v %v", auth, err)
	}
	if err := srv.SetPassword("   "); !errors.Is(err, ErrBlankPassword) || !srv.pass.accepts(nil, []byte("second")) {
		t.Fatalf("blank secret: %v, and the old secret must stay", err)
	}
	if auth, err := srv.Reload(Options{NoAuth: true}); err != nil || auth {
		t.Fatalf("--no-auth: %v %v", auth, err)
	}
	if auth, err := srv.Reload(Options{}); err != nil || auth {
		t.Fatalf("no password before and after: %v %v", auth, err)
	}
}
