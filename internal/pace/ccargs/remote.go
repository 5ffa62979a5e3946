package ccargs

import (
	"errors"
	"fmt"

	"github.com/buildfleet/buildfleet/internal/pace/argvet"
)

// ErrNotDispatchable is what every NotDispatchableError matches: compile locally instead.
var ErrNotDispatchable = errors.New("not dispatchable")

// NotDispatchableError says why a compile cannot be sent to a worker (pace-wire §3.9.1);
// pace-cc's verbose note names Reason. Err is argvet's refusal when an argument decided it.
type NotDispatchableError struct {
	Reason string
	Err    error
}

func (e *NotDispatchableError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("not dispatchable: %s: %v", e.Reason, e.Err)
	}
	return "not dispatchable: " + e.Reason
}

// Unwrap returns ErrNotDispatchable, or argvet's error when there is one (which itself
// matches argvet.ErrRejectedArgument), so errors.Is finds both.
func (e *NotDispatchableError) Unwrap() []error {
	if e.Err != nil {
		return []error{ErrNotDispatchable, e.Err}
	}
	return []error{ErrNotDispatchable}
}

// Reasons a compile is not dispatched.
const (
	NoDispatchAssembly   = "assembly output"
	NoDispatchAmbiguous  = "ambiguous source extension"
	NoDispatchLanguage   = "language not dispatchable"
	NoDispatchMacroDebug = "debug macro information"
	NoDispatchNoTarget   = "clang target unknown"
	NoDispatchArgument   = "argument refused"
)

// RemoteCompileArgs is the argument list a worker is sent (pace-wire §3.9.1):
// --target=<triple> first for clang drivers (from the compiler identity; gcc pins nothing),
// then the build's own arguments less the source, every path-valued option, the output,
// compile-stage, language and dependency options, the preprocessor-only options (the worker
// compiles preprocessed text, which -D/-U/-I no longer affect) and link-only options, then "-x
// <lang>-cpp-output". Values given as a separate argument are joined (-D X becomes -DX,
// -target T becomes --target=T). The survivors are screened with argvet.Prescreen before any
// lease is asked for.
func (c *Compile) RemoteCompileArgs(triple string) ([]string, error) {
	lang, err := c.dispatchLanguage()
	if err != nil {
		return nil, err
	}
	clang := c.Driver.Flavor.IsClang()
	if clang && triple == "" {
		return nil, &NotDispatchableError{Reason: NoDispatchNoTarget}
	}
	kept := make([]string, 0, len(c.Args))
	for i, t := range c.tokens {
		if i != c.source && !dispatchDropped(t) {
			kept = append(kept, c.dispatchSpelling(t)...)
		}
	}
	if err := argvet.Prescreen(c.Driver.Flavor, kept); err != nil {
		return nil, &NotDispatchableError{Reason: NoDispatchArgument, Err: err}
	}
	out := make([]string, 0, len(kept)+3)
	if clang {
		out = append(out, "--target="+triple)
	}
	out = append(out, kept...)
	return append(out, "-x", lang.PreprocessedSpelling()), nil
}

// dispatchLanguage is the language the worker is told, or why there is none: -x if the
// build gave it, else the extension with the driver's default (g++ -c a.c is C++); .C and .M
// read differently on case-insensitive file systems, so they are not guessed.
func (c *Compile) dispatchLanguage() (Language, error) {
	switch {
	case c.Mode != ModeObject:
		return 0, &NotDispatchableError{Reason: NoDispatchAssembly}
	case c.Debug.Macros:
		// The preprocessed text has no #defines left for the worker to record.
		return 0, &NotDispatchableError{Reason: NoDispatchMacroDebug}
	}
	if !c.LanguageForced {
		if ext := extension(c.Source); ext == "C" || ext == "M" {
			return 0, &NotDispatchableError{Reason: NoDispatchAmbiguous}
		}
	}
	if c.Language.PreprocessedSpelling() == "" {
		return 0, &NotDispatchableError{Reason: NoDispatchLanguage}
	}
	return c.Language, nil
}

// dispatchDropped are the tokens a worker must not see or has no use for.
func dispatchDropped(t token) bool {
	if t.kind != tokOption {
		return t.kind == tokOperand
	}
	if t.opt.path {
		return true
	}
	switch t.opt.role {
	case roleOther, roleTarget, roleArch, roleXclang, roleAssembler:
		return false
	}
	return true
}

// dispatchSpelling joins a value given as the next argument onto its option.
func (c *Compile) dispatchSpelling(t token) []string {
	if t.kind != tokOption || (t.n == 1 && t.opt.alias == "") {
		return t.verbatim(c.Args)
	}
	if t.opt.alias == "" {
		if t.opt.arity == eqOrSeparate || t.opt.arity == joinedOrSeparate {
			return []string{t.opt.joinedSpelling(t.value)}
		}
		return t.verbatim(c.Args) // a separate-only option: -mllvm X, -Xclang X, -arch X
	}
	return []string{t.opt.alias + t.value}
}
