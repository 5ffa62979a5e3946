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
	} {
		if _, _, err := parse(args, env(nil)); err == nil {
			t.Errorf("parse(%q) accepted", args)
		}
	}
}
