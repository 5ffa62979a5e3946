package ccargs

import (
	"errors"
	"fmt"
	"strings"

	"github.com/buildfleet/buildfleet/internal/pace/argvet"
)

// ErrNotDispatchable is what every NotDispatchableError matches: compile locally instead.
var ErrNotDispatchable = errors.New("not dispatchable")

// NotDispatchableError says why a compile cannot be sent to a worker (pace-wire §3.9.1);
// pace-cc's verbose note names Reason. Err is argvet's refusal when an argument decided it;
// Arg names the option when one of the rules here did.
type NotDispatchableError struct {
	Reason string
	Err    error
	Arg    string
}

func (e *NotDispatchableError) Error() string {
	switch {
	case e.Err != nil:
		return fmt.Sprintf("not dispatchable: %s: %v", e.Reason, e.Err)
	case e.Arg != "":
		return fmt.Sprintf("not dispatchable: %s: %s", e.Reason, e.Arg)
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
	// NoDispatchDebugColumns: clang's fully preprocessed text moves the columns DWARF records.
	NoDispatchDebugColumns = "debug information records columns that preprocessing moves"
	// NoDispatchOldDWARF: before version 5, gcc's line table also lists the file named on the
	// command line, which on a worker is its scratch file.
	NoDispatchOldDWARF = "debug information older than DWARF 5"
	// NoDispatchPreprocessor: an option whose effect a worker compiling gcc's directives-only
	// text cannot reproduce (-imacros, -traditional-cpp, a non-UTF-8 -finput-charset).
	NoDispatchPreprocessor = "preprocessor option a worker cannot reproduce"
	// NoDispatchPrefixMap: a prefix map whose value holds several '=', which gcc and pace
	// would split differently.
	NoDispatchPrefixMap = "prefix map with more than one '='"
	// NoDispatchSanitizer: sanitizers record the file names of the compile as the compiler
	// read them, beyond any prefix map: a gcc worker's are its scratch names.
	NoDispatchSanitizer = "sanitizer records the worker's file names"
)

// RemoteMode is what a worker is sent to compile (pace-wire §3.9.1).
type RemoteMode uint8

// Remote modes.
const (
	// RemotePreprocessed: the fully preprocessed text, compiled as -x <lang>-cpp-output.
	// Macro expansion and collapsed whitespace move columns, so debug information is exact
	// only without columns.
	RemotePreprocessed RemoteMode = iota + 1
	// RemoteDirectives: gcc's directives-only text, split into the files it included, with
	// the original files beside it for diagnostics (package tubundle). The worker compiles it
	// as the source language, so lines, columns, macro notes and include stacks are the local
	// compile's own.
	RemoteDirectives
)

// RemoteMode is how this compile is dispatched: directives-only for gcc, fully preprocessed
// for clang, whose preprocessor has no directives-only output.
func (c *Compile) RemoteMode() RemoteMode {
	if c.Driver.Flavor.IsClang() {
		return RemotePreprocessed
	}
	return RemoteDirectives
}

// RemoteCompileArgs is the argument list a worker is sent (pace-wire §3.9.1):
// --target=<triple> first for clang drivers (from the compiler identity; gcc pins nothing),
// then the build's own arguments less the source, every path-valued option, the output,
// compile-stage, language and dependency options and link-only options, then "-x
// <lang>-cpp-output" (a worker sent gcc's directives-only text compiles it as <lang>). The
// preprocessor-only options are dropped for clang, whose worker compiles preprocessed text;
// gcc's worker preprocesses again, so -D, -U, -undef and -A stay (the command-line macros
// must be defined where a local compile defines them) and so do -C, -CC and -P, which gcc
// records in DW_AT_producer. Values given as a separate argument are joined (-D X becomes
// -DX, -target T becomes --target=T). The survivors are screened with argvet.Prescreen
// before any lease is asked for.
//
// Debug information is dispatchable when the remote object can be byte-identical to a
// local one: never with macro information (-g3), with clang only when -gno-column-info is
// the last word on columns, with gcc only from DWARF 5 (an explicit -gdwarf-2 to -4
// refuses; the compiler's default is the caller's to check).
func (c *Compile) RemoteCompileArgs(triple string) ([]string, error) {
	lang, err := c.dispatchLanguage()
	if err != nil {
		return nil, err
	}
	clang := c.Driver.Flavor.IsClang()
	if clang && triple == "" {
		return nil, &NotDispatchableError{Reason: NoDispatchNoTarget}
	}
	if err := c.remoteDebug(); err != nil {
		return nil, err
	}
	mode := c.RemoteMode()
	if mode == RemoteDirectives {
		if err := c.directivesReproducible(); err != nil {
			return nil, err
		}
	}
	kept := make([]string, 0, len(c.Args))
	for i, t := range c.tokens {
		if i != c.source && !dispatchDropped(t, mode) {
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

// remoteDebug applies the debug-information rule on the parsed -g options.
func (c *Compile) remoteDebug() error {
	switch {
	case c.Debug.Level == 0:
		return nil
	case c.Debug.Macros:
		// Macro records name where each definition was read; the worker defines them elsewhere.
		return &NotDispatchableError{Reason: NoDispatchMacroDebug}
	case c.RemoteMode() == RemotePreprocessed && c.Debug.Columns != ColumnsOff:
		return &NotDispatchableError{Reason: NoDispatchDebugColumns}
	case c.RemoteMode() == RemoteDirectives && c.Debug.DWARF != 0 && c.Debug.DWARF < 5:
		return &NotDispatchableError{Reason: NoDispatchOldDWARF, Arg: fmt.Sprintf("-gdwarf-%d", c.Debug.DWARF)}
	}
	return nil
}

// directivesReproducible refuses the options whose effect a gcc worker compiling the
// directives-only text would not reproduce: -imacros (its text is not in the output),
// -traditional-cpp (another lexer), an input charset other than UTF-8 (the text is already
// converted) and a prefix map gcc would split elsewhere than pace. (-H passes through.)
func (c *Compile) directivesReproducible() error {
	for _, t := range c.tokens {
		arg := c.Args[t.pos]
		switch {
		case t.kind == tokOption && t.opt.name == "-imacros", t.kind == tokOption && t.opt.alias == "-imacros",
			arg == "-traditional-cpp", arg == "--traditional-cpp":
			return &NotDispatchableError{Reason: NoDispatchPreprocessor, Arg: arg}
		case strings.HasPrefix(arg, "-finput-charset=") && !isUTF8(strings.TrimPrefix(arg, "-finput-charset=")):
			return &NotDispatchableError{Reason: NoDispatchPreprocessor, Arg: arg}
		case strings.HasPrefix(arg, "-fsanitize="):
			return &NotDispatchableError{Reason: NoDispatchSanitizer, Arg: arg}
		case t.kind == tokOption && (t.opt.role == roleDebugMap || t.opt.role == roleOtherMap) &&
			strings.Count(t.value, "=") != 1:
			return &NotDispatchableError{Reason: NoDispatchPrefixMap, Arg: arg}
		}
	}
	return nil
}

func isUTF8(charset string) bool {
	return strings.EqualFold(charset, "utf-8") || strings.EqualFold(charset, "utf8")
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
func dispatchDropped(t token, mode RemoteMode) bool {
	if t.kind != tokOption {
		return t.kind == tokOperand
	}
	if t.opt.path {
		return true
	}
	switch t.opt.role {
	case roleOther, roleTarget, roleArch, roleXclang, roleAssembler:
		return false
	case rolePreproc:
		return mode != RemoteDirectives || !directivesKept[t.opt.name]
	case roleNoLineMarks:
		return mode != RemoteDirectives
	}
	return true
}

// directivesKept are the preprocessor options a gcc worker compiling directives-only text
// is given: the command-line macros and assertions, -undef (the worker's preprocessor
// predefines again), and the comment options gcc records in DW_AT_producer.
var directivesKept = map[string]bool{
	"-D": true, "--define-macro": true, "-U": true, "--undefine-macro": true, "-undef": true,
	"-A": true, "--assert": true, "-C": true, "-CC": true, "--comments": true, "--comments-in-macros": true,
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
