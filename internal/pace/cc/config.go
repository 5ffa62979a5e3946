package cc

import (
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/ccstats"
	"github.com/buildfleet/buildfleet/internal/pace/hitmemo"
)

// DefaultAddr is where pace-cc finds a cache with no configuration: this machine's node tier.
const DefaultAddr = "127.0.0.1:6674"

// Config is pace-cc's configuration, read from PACE_* variables. Malformed numbers fall back to
// their defaults: a typo in the environment must never fail a compile.
type Config struct {
	Addr            string // cache endpoint; "" = no caching
	SourceDir       string // optional root: paths under it are keyed and stored location-free
	BinaryDir       string // optional root for the build tree
	PrefetchGroup   string
	Verbose         bool
	NoStats         bool
	NoDirect        bool
	NoDepend        bool
	Verify          uint64 // recompile 1 in Verify hits and compare; 0 = off
	ConnectTimeout  time.Duration
	Timeout         time.Duration // one whole cache exchange
	DispatchTimeout time.Duration
	DispatchIdle    time.Duration
	MaxStoreBytes   uint64
	Scheduler       string // "" = no dispatch
	Token, User     string
	StatsDir        string
	// KeyEnv are the compiler-relevant environment variables that are set, as NAME=value
	// lines in a fixed order: they change include search or the diagnostics' text, so both keys
	// cover them.
	KeyEnv []string
	// SideOutputEnv names a variable that makes gcc write a second file (a depfile), which a
	// hit could not reproduce; such compiles pass through.
	SideOutputEnv string
	// MemoEnv is what the hit memo's invocation key covers of the environment
	// (hitmemo.EnvLines): the roots and KeyEnv's variables.
	MemoEnv []string
}

// keyedEnv are the variables the compiler reads that change what a compile prints or finds.
// The front's hit memo keys on the same list, so it lives with the memo.
var keyedEnv = hitmemo.CompilerEnv

// ConfigFromEnv reads the configuration through lookup (os.LookupEnv in production).
func ConfigFromEnv(lookup func(string) (string, bool)) Config {
	getenv := func(name string) string { v, _ := lookup(name); return v }
	c := Config{
		Addr:            DefaultAddr,
		SourceDir:       cleanRoot(getenv("PACE_SOURCE_DIR")),
		BinaryDir:       cleanRoot(getenv("PACE_BINARY_DIR")),
		PrefetchGroup:   orDefault(getenv("PACE_PREFETCH_GROUP"), "default"),
		Verbose:         flagSet(getenv("PACE_VERBOSE")),
		NoStats:         flagSet(getenv("PACE_NO_STATS")),
		NoDirect:        flagSet(getenv("PACE_NO_DIRECT")),
		NoDepend:        flagSet(getenv("PACE_NO_DEPEND")),
		Verify:          number(getenv("PACE_VERIFY"), 0),
		ConnectTimeout:  millis(getenv("PACE_CONNECT_TIMEOUT_MS"), 1000),
		Timeout:         millis(getenv("PACE_TIMEOUT_MS"), 10000),
		DispatchTimeout: millis(getenv("PACE_DISPATCH_TIMEOUT_MS"), 600000),
		DispatchIdle:    millis(getenv("PACE_DISPATCH_IDLE_MS"), 30000),
		MaxStoreBytes:   number(getenv("PACE_MAX_STORE_BYTES"), 256<<20),
		Scheduler:       strings.TrimSpace(getenv("PACE_SCHEDULER")),
		Token:           getenv("PACE_TOKEN"),
		User:            getenv("PACE_USER"),
		StatsDir:        ccstats.Dir(getenv),
		MemoEnv:         hitmemo.EnvLines(lookup),
	}
	for _, name := range keyedEnv {
		if v, ok := lookup(name); ok {
			c.KeyEnv = append(c.KeyEnv, name+"="+v)
		}
	}
	for _, name := range []string{"DEPENDENCIES_OUTPUT", "SUNPRO_DEPENDENCIES"} {
		if v, _ := lookup(name); v != "" {
			c.SideOutputEnv = name
		}
	}
	if addr, set := lookup("PACE_ADDR"); set {
		c.Addr = strings.TrimSpace(addr) // set but empty: caching off
	}
	if c.NoStats {
		c.StatsDir = ""
	}
	return c
}

func cleanRoot(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	if t := strings.TrimRight(s, "/"); t != "" {
		return filepath.Clean(t)
	}
	return "/"
}

func orDefault(s, d string) string {
	if s = strings.TrimSpace(s); s == "" {
		return d
	}
	return s
}

func flagSet(s string) bool {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "0", "false", "no", "off":
		return false
	}
	return true
}

func number(s string, d uint64) uint64 {
	n, err := strconv.ParseUint(strings.TrimSpace(s), 10, 64)
	if err != nil {
		return d
	}
	return n
}

// millis reads a millisecond count; 0 means "no bound" and is returned as 0.
func millis(s string, d uint64) time.Duration {
	return time.Duration(number(s, d)) * time.Millisecond
}
