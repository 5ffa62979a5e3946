package ccfront

import (
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// config is the part of pace-cc's configuration a hit needs. Anything the front does not
// handle itself — a setting that changes what a hit does, a password, statistics off — sends
// the invocation to pace-cc-full, which reads the whole configuration (pace-wire §3.12).
type config struct {
	addr           string
	stateDir       string
	srcRoot        string
	buildRoot      string
	group          string
	verbose        bool
	connectTimeout time.Duration
	timeout        time.Duration
}

// handedOver are the variables whose presence alone sends an invocation to pace-cc-full.
var handedOver = []string{"PACE_NO_DIRECT", "PACE_VERIFY", "PACE_NO_STATS", "PACE_TOKEN",
	"DEPENDENCIES_OUTPUT", "SUNPRO_DEPENDENCIES"}

func configFrom(lookup func(string) (string, bool)) (config, string) {
	get := func(name string) string { v, _ := lookup(name); return v }
	for _, name := range handedOver {
		if get(name) != "" {
			return config{}, name + " is set"
		}
	}
	c := config{
		addr:           "127.0.0.1:6674",
		srcRoot:        cleanRoot(get("PACE_SOURCE_DIR")),
		buildRoot:      cleanRoot(get("PACE_BINARY_DIR")),
		group:          strings.TrimSpace(get("PACE_PREFETCH_GROUP")),
		verbose:        flagSet(get("PACE_VERBOSE")),
		connectTimeout: millis(get("PACE_CONNECT_TIMEOUT_MS"), 1000),
		timeout:        millis(get("PACE_TIMEOUT_MS"), 10000),
	}
	if c.group == "" {
		c.group = "default"
	}
	if a, set := lookup("PACE_ADDR"); set {
		if c.addr = strings.TrimSpace(a); c.addr == "" {
			return config{}, "PACE_ADDR is set empty"
		}
	}
	switch {
	case get("XDG_STATE_HOME") != "":
		c.stateDir = filepath.Join(get("XDG_STATE_HOME"), "pace-cc")
	case get("HOME") != "":
		c.stateDir = filepath.Join(get("HOME"), ".local", "state", "pace-cc")
	default:
		return config{}, "no state directory"
	}
	return c, ""
}

// cleanRoot, flagSet and millis read values as pace-cc-full does (cc.ConfigFromEnv); a test
// holds the two to the same answers.
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

func flagSet(s string) bool {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "0", "false", "no", "off":
		return false
	}
	return true
}

func millis(s string, d uint64) time.Duration {
	n, err := strconv.ParseUint(strings.TrimSpace(s), 10, 64)
	if err != nil {
		n = d
	}
	return time.Duration(n) * time.Millisecond
}
