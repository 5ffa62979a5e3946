package cc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/ccargs"
	"github.com/buildfleet/buildfleet/internal/pace/ccstats"
	"github.com/buildfleet/buildfleet/internal/pace/toolchain"
	"github.com/buildfleet/buildfleet/internal/pace/tubundle"
)

// remoteSource is what a worker is sent: the bytes (preprocessed text or an encoded bundle)
// and, for a bundle, what pace-cc keeps to read the diagnostics back (pace-wire §3.9.1).
type remoteSource struct {
	text  []byte
	built *tubundle.Built
	probe probed // the probe the bundle came from: its depfile is the one to write
	// exactLocale: the worker's message locale is the one this machine's compiler uses, so
	// its diagnostics can be replayed.
	exactLocale bool
}

// bundleForDispatch bundles gcc's directives-only text of this compile: the key probe's when
// it ran, else a probe of its own. A probe that printed anything (#warning, a pragma's
// message) keeps the compile here: the local compile prints it in its place among the rest.
func (r *run) bundleForDispatch(ctx context.Context, pp probed) (remoteSource, ccstats.Cause, error) {
	if !pp.directivesOnly {
		t0 := time.Now()
		var err error
		pp, err = r.probe(ctx)
		r.rec.CppMS += ms(time.Since(t0))
		if err != nil {
			return remoteSource{}, ccstats.CausePreprocessFailed, err
		}
	}
	if r.comp.DebugName(r.cwd) == "" {
		// A COMPILE's directory pair is both set or neither: "" cannot be sent as a replacement.
		return remoteSource{}, ccstats.CauseArguments, fmt.Errorf("a prefix map turns the working directory into nothing")
	}
	if len(bytes.TrimSpace(pp.stderr)) > 0 {
		return remoteSource{}, ccstats.CausePreprocessorPrinted, fmt.Errorf("the preprocessor printed diagnostics")
	}
	locale, exact := r.diagLocale(ctx)
	built, err := tubundle.Build(tubundle.Source{
		Text: pp.text, SourceName: r.comp.Source, Locale: locale,
		Read:  func(name string) ([]byte, error) { return os.ReadFile(r.abs(name)) },
		Debug: r.comp.DebugName, Macro: r.comp.MacroName,
	})
	if err != nil {
		return remoteSource{}, ccstats.CauseUnbundled, err
	}
	return remoteSource{text: tubundle.Encode(nil, built.Bundle), built: built, probe: pp, exactLocale: exact}, "", nil
}

// remoteDiagnostics is the worker's stderr as this machine's compile would print it, or why it cannot be
// (pace-wire §3.9.2 step 6): only a bundle's diagnostics can be mapped back, and only when
// the worker printed them the way the local compiler would (message locale, no colours set
// from this environment, text format).
func (r *run) remoteDiagnostics(stderr []byte, src remoteSource) ([]byte, string) {
	switch {
	case src.built == nil:
		return nil, "fully preprocessed text's diagnostics are not a local compile's"
	case !src.exactLocale:
		return nil, "the message locale here is neither C nor C.UTF-8"
	case r.comp.Color == ccargs.ColorAlways && r.envSet("GCC_COLORS"):
		return nil, "GCC_COLORS recolours the local diagnostics"
	}
	for _, a := range r.args {
		if strings.HasPrefix(a, "-fdiagnostics-format=") && a != "-fdiagnostics-format=text" || a == "-fdiagnostics-urls=always" {
			return nil, a + " prints what the worker cannot match"
		}
	}
	out, ok, why := tubundle.Localize(stderr, src.built)
	if !ok {
		return nil, why
	}
	return out, ""
}

// landsExactly: an object a bundle produced names none of the worker's scratch files (an
// instrumentation no prefix map reaches would leave one).
func landsExactly(obj []byte, src remoteSource) bool {
	return src.built == nil || !bytes.Contains(obj, []byte("pace-f/")) && !bytes.Contains(obj, []byte("pace-r/"))
}

// envSet reports a keyed environment variable set and not empty.
func (r *run) envSet(name string) bool {
	for _, kv := range r.cfg.KeyEnv {
		if v, ok := strings.CutPrefix(kv, name+"="); ok && v != "" {
			return true
		}
	}
	return false
}

var gccVersion = regexp.MustCompile(`(\d+)\.\d+\.\d+\s*$`)

// defaultDWARF is the DWARF version gcc writes when -g names none: 5 from gcc 11 on ELF
// targets, taken as 4 for an older or unknown version and for Darwin.
func defaultDWARF(id toolchain.Identity) int {
	m := gccVersion.FindStringSubmatch(id.Banner)
	if m == nil || strings.Contains(id.Target, "darwin") {
		return 4
	}
	if major, _ := strconv.Atoi(m[1]); major >= 11 {
		return 5
	}
	return 4
}

// remoteSourceFor is what the worker is sent for this compile's mode: a bundle for gcc, the
// fully preprocessed text for clang.
func (r *run) remoteSourceFor(ctx context.Context, pp probed) (remoteSource, ccstats.Cause, error) {
	if r.comp.RemoteMode() == ccargs.RemoteDirectives {
		return r.bundleForDispatch(ctx, pp)
	}
	text, err := r.preprocessForDispatch(ctx)
	if err != nil {
		return remoteSource{}, ccstats.CausePreprocessFailed, err
	}
	return remoteSource{text: text}, "", nil
}

// argumentsCause is the statistics cause of a RemoteCompileArgs refusal.
func argumentsCause(err error) ccstats.Cause {
	var nd *ccargs.NotDispatchableError
	if errors.As(err, &nd) {
		switch nd.Reason {
		case ccargs.NoDispatchDebugColumns:
			return ccstats.CauseDebugColumns
		case ccargs.NoDispatchMacroDebug, ccargs.NoDispatchOldDWARF:
			return ccstats.CauseDebugInfo
		}
	}
	return ccstats.CauseArguments
}
