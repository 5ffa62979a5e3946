package node

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestDefaults(t *testing.T) {
	c, err := Load(nil, 16<<30)
	if err != nil {
		t.Fatal(err)
	}
	if _, slotsGiven := c.Worker.Slots.Get(); c.ListenNode != "6674" || c.ListenRaft != "6680" || c.Advertise != "auto" || slotsGiven ||
		c.CacheMemory != 4<<30 || c.Worker.Drain() != 30*time.Second || c.FleetOpen || c.AdminListen != "" {
		t.Fatalf("defaults: %+v", c)
	}
	if small, _ := Load(nil, 1<<30); small.CacheMemory != 512<<20 {
		t.Fatalf("cache memory floor: %d", small.CacheMemory)
	}
	if big, _ := Load(nil, 256<<30); big.CacheMemory != 8<<30 {
		t.Fatalf("cache memory ceiling: %d", big.CacheMemory)
	}
}

func TestUnknownNodeClassIsAUsageError(t *testing.T) {
	if _, err := Load([]string{"--node-class=server"}, 8<<30); err == nil || !strings.Contains(err.Error(), "workstation or dedicated") {
		t.Fatalf("err = %v", err)
	}
}

func TestSettingsFileAndCommandLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pace-node.yaml")
	os.WriteFile(path, []byte(`# a node
listen_node: 7000
fleet_open: true
cache_memory: "25%"   # a quoted value
toolchain:
  - gcc
  - g++
allow_compile_arg:
  - -fexample
`), 0o644)
	c, err := Load([]string{"--config=" + path, "--listen-node=7001"}, 8<<30)
	if err != nil {
		t.Fatal(err)
	}
	if c.ListenNode != "7001" || !c.FleetOpen || c.CacheMemory != 2<<30 ||
		strings.Join(c.Worker.Toolchains, ",") != "gcc,g++" || strings.Join(c.Worker.AllowCompileArgs, ",") != "-fexample" {
		t.Fatalf("%+v", c)
	}
	if !c.Explicit("fleet-open") || c.Explicit("upstream") {
		t.Fatal("explicitness lost")
	}
}

func TestSettingsFileRefusals(t *testing.T) {
	for name, content := range map[string]string{
		"twice":          "slots: 2\nslots: 3\n",
		"nested":         "tier:\n  memory: 2\n",
		"bare item":      "- gcc\n",
		"not a setting":  "just words\n",
		"unknown name":   "no_such_flag: 1\n",
		"empty list":     "toolchain:\nslots: 1\n",
		"retired flag":   "cluster_key_file: /etc/k\n",
		"bad value type": "slots: many\n",
	} {
		path := filepath.Join(t.TempDir(), "c.yaml")
		os.WriteFile(path, []byte(content), 0o644)
		if _, err := Load([]string{"--config=" + path}, 8<<30); !errors.Is(err, ErrUsage) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestRetiredFlagsAreRefusedByName(t *testing.T) {
	_, err := Load([]string{"--raft-peer=x"}, 8<<30)
	if !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), "retired") {
		t.Fatalf("%v", err)
	}
}
