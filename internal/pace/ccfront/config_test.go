package ccfront_test

import (
	"testing"

	"github.com/buildfleet/buildfleet/internal/pace/cc"
	"github.com/buildfleet/buildfleet/internal/pace/ccfront"
)

func lookupIn(env map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := env[k]; return v, ok }
}

// The front reads every setting it uses as pace-cc-full does.
func TestConfigAgreesWithPaceCCFull(t *testing.T) {
	for i, env := range []map[string]string{
		{"HOME": "/h"},
		{"HOME": "/h", "XDG_STATE_HOME": "/x", "PACE_ADDR": " 10.0.0.1:7 ", "PACE_PREFETCH_GROUP": " g "},
		{"HOME": "/h", "PACE_SOURCE_DIR": " /src/ ", "PACE_BINARY_DIR": "/src/build//", "PACE_VERBOSE": "yes"},
		{"HOME": "/h", "PACE_SOURCE_DIR": "///", "PACE_VERBOSE": "off", "PACE_CONNECT_TIMEOUT_MS": "x", "PACE_TIMEOUT_MS": "0"},
		{"HOME": "/h", "PACE_CONNECT_TIMEOUT_MS": " 250 ", "PACE_TIMEOUT_MS": "77", "PACE_VERBOSE": "0"},
	} {
		full := cc.ConfigFromEnv(lookupIn(env))
		front, why := ccfront.ConfigFrom(lookupIn(env))
		if why != "" {
			t.Fatalf("case %d handed over: %s", i, why)
		}
		src, build := front.Roots()
		connect, whole := front.Timeouts()
		if front.StateDir() != full.StatsDir || src != full.SourceDir || build != full.BinaryDir ||
			front.Group() != full.PrefetchGroup || front.Verbose() != full.Verbose || front.Addr() != full.Addr ||
			connect != full.ConnectTimeout || whole != full.Timeout {
			t.Errorf("case %d: front %+v, full %+v", i, front, full)
		}
	}
}

// Settings that change what a hit does, and a cache that needs a password, are pace-cc-full's.
func TestConfigHandsOver(t *testing.T) {
	for _, env := range []map[string]string{
		{"HOME": "/h", "PACE_NO_DIRECT": "1"},
		{"HOME": "/h", "PACE_VERIFY": "10"},
		{"HOME": "/h", "PACE_NO_STATS": "1"},
		{"HOME": "/h", "PACE_TOKEN": "secret"},
		{"HOME": "/h", "DEPENDENCIES_OUTPUT": "x.d"},
		{"HOME": "/h", "SUNPRO_DEPENDENCIES": "x.d"},
		{"HOME": "/h", "PACE_ADDR": " "},
		{},
	} {
		if _, why := ccfront.ConfigFrom(lookupIn(env)); why == "" {
			t.Errorf("%v: served by the front", env)
		}
	}
}
