package cc

import (
	"testing"
	"time"
)

func envOf(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestConfigDefaults(t *testing.T) {
	c := ConfigFromEnv(envOf(map[string]string{"HOME": "/h"}))
	if c.Addr != DefaultAddr || c.PrefetchGroup != "default" || c.Timeout != 10*time.Second ||
		c.ConnectTimeout != time.Second || c.MaxStoreBytes != 256<<20 || c.Scheduler != "" ||
		c.StatsDir != "/h/.local/state/pace-cc" || c.NoDirect || c.Verbose {
		t.Fatalf("defaults: %+v", c)
	}
}

func TestConfigEmptyAddrTurnsCachingOff(t *testing.T) {
	if c := ConfigFromEnv(envOf(map[string]string{"PACE_ADDR": ""})); c.Addr != "" {
		t.Fatalf("PACE_ADDR set empty gave %q", c.Addr)
	}
	if c := ConfigFromEnv(envOf(map[string]string{"PACE_ADDR": "10.0.0.1:7000"})); c.Addr != "10.0.0.1:7000" {
		t.Fatalf("PACE_ADDR = %q", c.Addr)
	}
}

func TestConfigMalformedNumbersFallBack(t *testing.T) {
	c := ConfigFromEnv(envOf(map[string]string{"PACE_TIMEOUT_MS": "ten", "PACE_VERIFY": "-1", "PACE_CONNECT_TIMEOUT_MS": "0"}))
	if c.Timeout != 10*time.Second || c.Verify != 0 || c.ConnectTimeout != 0 {
		t.Fatalf("%+v", c)
	}
}

func TestConfigRootsAndFlags(t *testing.T) {
	c := ConfigFromEnv(envOf(map[string]string{
		"PACE_SOURCE_DIR": "/src/lua/", "PACE_BINARY_DIR": "/", "PACE_VERBOSE": "1",
		"PACE_NO_DIRECT": "yes", "PACE_NO_STATS": "1", "HOME": "/h",
	}))
	if c.SourceDir != "/src/lua" || c.BinaryDir != "/" || !c.Verbose || !c.NoDirect || c.StatsDir != "" {
		t.Fatalf("%+v", c)
	}
}
