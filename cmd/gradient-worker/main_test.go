package main

import (
	"log/slog"
	"slices"
	"testing"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestParseFlagsAndEnvironment(t *testing.T) {
	cfg, level, err := parse([]string{"--server=wss://ci.example.org/proto", "--base-dir=/tmp/w", "--max-concurrent-builds=4", "--log-level=debug"},
		env(map[string]string{"GRADIENT_WORKER_PEERS_FILE": "/etc/peers", "GRADIENT_WORKER_SYSTEM_FEATURES": "kvm, big-parallel"}))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.ServerURL != "wss://ci.example.org/proto" || cfg.BaseDir != "/tmp/w" || cfg.MaxConcurrentBuilds != 4 ||
		cfg.PeersFile != "/etc/peers" || level != slog.LevelDebug || !slices.Equal(cfg.SystemFeatures, []string{"kvm", "big-parallel"}) || cfg.Architectures != nil {
		t.Fatalf("cfg = %+v, level %v", cfg, level)
	}
}

func TestParseRefusesBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"--server=http://x/proto"},
		{"--server=ws://x/proto", "--max-concurrent-builds=0"},
		{"--server=ws://x/proto", "--log-level=loud"},
		{"--server=ws://x/proto", "extra"},
		{"--server=ws://x/proto", "--listen"},
		{"--listen=nonsense"},
		{"--listen", "127.0.0.1:4000"}, // a separate value is an extra argument, not the address
	} {
		if _, _, err := parse(args, env(nil)); err == nil {
			t.Errorf("parse(%q) accepted", args)
		}
	}
}

func TestParseListenMode(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--listen"}, "127.0.0.1:3100"},
		{[]string{"--listen=0.0.0.0:4100"}, "0.0.0.0:4100"},
		{[]string{"--listen=[::1]:3100", "--accepted-server-tokens-file=/etc/servers"}, "[::1]:3100"},
	} {
		cfg, _, err := parse(tc.args, env(nil))
		if err != nil {
			t.Fatalf("parse(%q): %v", tc.args, err)
		}
		if cfg.Listen != tc.want || cfg.ServerURL != "" {
			t.Errorf("parse(%q): listen %q server %q, want listen %q", tc.args, cfg.Listen, cfg.ServerURL, tc.want)
		}
	}
	cfg, _, err := parse([]string{"--listen"}, env(map[string]string{"GRADIENT_WORKER_ACCEPTED_SERVER_TOKENS_FILE": "/etc/servers"}))
	if err != nil || cfg.AcceptedServerTokensFile != "/etc/servers" {
		t.Fatalf("tokens file from the environment: %q, %v", cfg.AcceptedServerTokensFile, err)
	}
}
