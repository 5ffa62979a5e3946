// Package ccstats keeps pace-cc's statistics: one JSON line appended per invocation to a log in
// the user's state directory, and the report --show-stats prints and --html-stats writes from
// it: outcomes, latencies, and dispatch outcomes grouped by cause.
//
// A log rather than counters in a shared file: hundreds of pace-cc processes run at once under
// make -j, and an O_APPEND write of one whole line is atomic on a local filesystem, so nothing
// needs a lock and no update is lost. Write errors are swallowed: statistics never fail a build.
package ccstats

import (
	"encoding/json"
	"os"
	"path/filepath"
	"time"
)

// Outcome is what one invocation came to.
type Outcome string

const (
	Hit         Outcome = "hit"         // served from the cache
	Miss        Outcome = "miss"        // compiled, then offered to the cache
	Uncacheable Outcome = "uncacheable" // a compile pace-cc cannot cache (Reason says why)
	Passthrough Outcome = "passthrough" // not a compile at all (link, -E, …): run untouched
	Unavailable Outcome = "unavailable" // the cache did not answer; compiled locally
	Fallback    Outcome = "fallback"    // something went wrong in pace-cc; compiled locally
	Failed      Outcome = "failed"      // the compiler itself failed
)

// Record is one invocation's line.
type Record struct {
	Time     int64   `json:"t"` // Unix milliseconds
	Outcome  Outcome `json:"outcome"`
	Via      string  `json:"via,omitempty"`    // "direct" or "preprocessed" for hits
	Reason   string  `json:"reason,omitempty"` // uncacheable/fallback reason
	Group    string  `json:"group,omitempty"`
	Source   string  `json:"tu,omitempty"`
	TotalMS  float64 `json:"ms"`
	CppMS    float64 `json:"cpp_ms,omitempty"`    // running the preprocessor (key probe, dispatch text)
	LookupMS float64 `json:"lookup_ms,omitempty"` // cache lookups (manifest and object)
	StoreMS  float64 `json:"store_ms,omitempty"`  // cache stores (object and manifest)
	CacheMS  float64 `json:"io_ms,omitempty"`     // all cache I/O: lookups plus stores
	// Dispatch is what became of the miss's offer to the fleet. Builds before the cause
	// vocabulary wrote free text here; ParseLine normalises both.
	Dispatch Cause  `json:"dispatch,omitempty"`
	Worker   string `json:"worker,omitempty"` // the worker that compiled a dispatched miss
}

// LogName is the file name of the invocation log inside the state directory.
const LogName = "invocations.log"

// Dir returns pace-cc's state directory: $XDG_STATE_HOME/pace-cc, else ~/.local/state/pace-cc,
// or "" when neither is known.
func Dir(getenv func(string) string) string {
	if x := getenv("XDG_STATE_HOME"); x != "" {
		return filepath.Join(x, "pace-cc")
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".local", "state", "pace-cc")
	}
	return ""
}

// Append writes one record as one line. It returns the error for tests; callers ignore it.
func Append(dir string, r Record) error {
	if dir == "" {
		return nil
	}
	if r.Time == 0 {
		r.Time = time.Now().UnixMilli()
	}
	line, err := json.Marshal(r)
	if err != nil {
		return err
	}
	line = append(line, '\n')
	f, err := os.OpenFile(filepath.Join(dir, LogName), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if os.IsNotExist(err) {
		if err = os.MkdirAll(dir, 0o755); err == nil {
			f, err = os.OpenFile(filepath.Join(dir, LogName), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		}
	}
	if err != nil {
		return err
	}
	_, werr := f.Write(line) // one write call: the kernel appends it whole
	cerr := f.Close()
	if werr != nil {
		return werr
	}
	return cerr
}

// Zero removes the log.
func Zero(dir string) error {
	err := os.Remove(filepath.Join(dir, LogName))
	if os.IsNotExist(err) {
		return nil
	}
	return err
}
