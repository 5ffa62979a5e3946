package ccfront

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/buildfleet/buildfleet/internal/pace/ccargs"
)

// passThroughIfNotACompile runs the real compiler in this process's place when pace-cc-full
// would only pass the command through (pace-wire §3.14): a link, assembler input, a syntax
// check, any line ccargs.Classify refuses, but not a preprocessor run, which may be a
// dependency listing pace-cc-full caches. A configure script's hundreds of test links then
// cost one small process each before the compiler, not two. It records the passthrough as
// pace-cc-full would, and returns only if the compiler could not be run.
func (f *front) passThroughIfNotACompile() {
	_, err := ccargs.Classify(ccargs.Invocation{Compiler: f.compiler, Args: f.args, Cwd: f.p.Cwd,
		Roots: ccargs.Roots{Source: f.cfg.srcRoot, Build: f.cfg.buildRoot}, ImplicitOutput: true})
	reason := ccargs.ReasonOf(err)
	if reason == "" || reason == ccargs.ReasonPreprocessOnly {
		return
	}
	if f.cfg.verbose {
		fmt.Fprintf(f.p.Stderr, "pace-cc: passthrough (%s): running %s uncached\n", reason, filepath.Base(f.compiler))
	}
	now := f.p.Now()
	if line, err := passthroughJSON(f.cfg.group, string(reason), now, ms(now.Sub(f.start))); err == nil {
		_ = appendLine(filepath.Join(f.cfg.stateDir, "invocations.log"), append(line, '\n'))
	}
	_ = f.p.Exec(f.compiler, append([]string{f.compiler}, f.args...), f.p.Environ)
}

// passthroughJSON is the statistics line of a passthrough, in ccstats.Record's layout, written
// by hand as statsJSON is.
func passthroughJSON(group, reason string, now time.Time, totalMS float64) ([]byte, error) {
	if !utf8.ValidString(group) || !utf8.ValidString(reason) {
		return json.Marshal(passthroughLine{Time: now.UnixMilli(), Outcome: "passthrough", Reason: reason,
			Group: group, TotalMS: totalMS})
	}
	b := make([]byte, 0, 96+len(group)+len(reason))
	b = strconv.AppendInt(append(b, `{"t":`...), now.UnixMilli(), 10)
	b = appendJSONString(append(b, `,"outcome":"passthrough","reason":`...), reason)
	b = appendJSONString(append(b, `,"group":`...), group)
	b = strconv.AppendFloat(append(b, `,"ms":`...), totalMS, 'f', -1, 64)
	return append(b, '}'), nil
}

// passthroughLine is a passthrough's line for encoding/json.
type passthroughLine struct {
	Time    int64   `json:"t"`
	Outcome string  `json:"outcome"`
	Reason  string  `json:"reason"`
	Group   string  `json:"group"`
	TotalMS float64 `json:"ms"`
}
