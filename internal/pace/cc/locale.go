package cc

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/buildfleet/buildfleet/internal/pace/tubundle"
)

// localeEnv are the variables that decide the language and the quotes of gcc's messages.
var localeEnv = []string{"LC_ALL", "LC_MESSAGES", "LC_CTYPE", "LANG", "LANGUAGE"}

// diagLocale is the message locale a worker compiles a bundle under so that its diagnostics
// read as this machine's compiler prints them, and whether one of the two a worker uses
// (C, C.UTF-8) does: an environment that leaves both messages and characters to C is C; any
// other is told apart by running the compiler once on an error under it, under C and under
// C.UTF-8, and comparing. The answer is kept in the state directory per compiler and
// environment.
func (r *run) diagLocale(ctx context.Context) (string, bool) {
	var set []string
	for _, kv := range r.cfg.KeyEnv {
		name, v, _ := strings.Cut(kv, "=")
		if isLocaleVar(name) && v != "" && v != "C" && v != "POSIX" {
			set = append(set, kv)
		}
	}
	if len(set) == 0 {
		return tubundle.LocaleC, true
	}
	sum := sha256.Sum256([]byte(r.compiler + "\x00" + strings.Join(set, "\x00")))
	cache := ""
	if dir := r.stateDir("compilers"); dir != "" {
		cache = filepath.Join(dir, "diag-locale-"+hex.EncodeToString(sum[:8]))
		if b, err := os.ReadFile(cache); err == nil {
			return answer(string(b))
		}
	}
	found := r.probeLocale(ctx)
	if cache != "" && found != "" {
		os.MkdirAll(filepath.Dir(cache), 0o755)
		os.WriteFile(cache, []byte(found), 0o644)
	}
	return answer(found)
}

func isLocaleVar(name string) bool {
	for _, n := range localeEnv {
		if n == name {
			return true
		}
	}
	return false
}

func answer(found string) (string, bool) {
	if found == tubundle.LocaleC || found == tubundle.LocaleCUTF8 {
		return found, true
	}
	return tubundle.LocaleC, false
}

// probeLocale compiles an undeclared name under this environment and under each locale a
// worker uses; "none" when no output matches, "" when the compiler could not be run.
func (r *run) probeLocale(ctx context.Context) string {
	here := r.localeProbe(ctx, "")
	if here == nil {
		return ""
	}
	for _, l := range []string{tubundle.LocaleC, tubundle.LocaleCUTF8} {
		if bytes.Equal(here, r.localeProbe(ctx, l)) {
			return l
		}
	}
	return "none"
}

// localeProbe is the compiler's stderr for an error whose message quotes a name.
func (r *run) localeProbe(ctx context.Context, locale string) []byte {
	cmd := exec.CommandContext(ctx, r.compiler, "-fsyntax-only", "-x", "c", "-")
	cmd.Stdin = strings.NewReader("int f(void) { return undeclared_name; }\n")
	if locale != "" {
		cmd.Env = append(os.Environ(), "LC_ALL="+locale)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err == nil || stderr.Len() == 0 {
		return nil // the probe is an error by design: no output means no answer
	}
	return stderr.Bytes()
}
