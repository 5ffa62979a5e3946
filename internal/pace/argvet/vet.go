package argvet

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// ErrRejectedArgument is what every refusal wraps; the wire code is worker-rejected-argument.
var ErrRejectedArgument = errors.New("worker-rejected-argument")

// ErrInvalidExtension reports an --allow-compile-arg entry that can never be admitted.
var ErrInvalidExtension = errors.New("invalid --allow-compile-arg")

// Rules a refusal names.
const (
	RuleResponseFile  = "response file"
	RuleControlChar   = "control character"
	RuleNotAnOption   = "no option introducer"
	RulePathSeparator = "path separator"
	RuleNotAllowed    = "not on the allowlist"
	RuleBadLanguage   = "-x without a preprocessed language"
	RuleUnknownDriver = "unknown driver family"
)

// RejectedError names the first argument a job may not carry.
type RejectedError struct {
	Index int    // position in the argument list
	Arg   string // the argument, sanitized for the refusal message (SanitizeArg)
	Rule  string // which check refused it, e.g. RuleNotAllowed or "denied: fplugin"
}

func (e *RejectedError) Error() string {
	return fmt.Sprintf("argument %d %q rejected: %s", e.Index, e.Arg, e.Rule)
}

// Unwrap makes every RejectedError match ErrRejectedArgument.
func (e *RejectedError) Unwrap() error { return ErrRejectedArgument }

func reject(i int, arg, rule string) error {
	return &RejectedError{Index: i, Arg: SanitizeArg(arg), Rule: rule}
}

// MaxNamedArgLen bounds the argument a refusal names (pace-wire §3.10).
const MaxNamedArgLen = 96

// SanitizeArg renders arg for a refusal: printable ASCII kept, every other character '?', at
// most MaxNamedArgLen bytes with "..." marking a cut.
func SanitizeArg(arg string) string {
	var b strings.Builder
	for _, r := range arg {
		if b.Len() > MaxNamedArgLen {
			break
		}
		if r < 0x20 || r > 0x7e {
			r = '?'
		}
		b.WriteRune(r)
	}
	out := b.String()
	if len(out) > MaxNamedArgLen {
		out = out[:MaxNamedArgLen-3] + "..."
	}
	return out
}

// Policy is a worker's vetting configuration: the built-in tables plus the operator's exact
// extensions. The zero Policy has no extensions.
type Policy struct {
	extra map[string]struct{}
}

// NewPolicy builds a policy with the operator's --allow-compile-arg entries. An entry that a
// hard refusal covers, that carries a path separator or '@', or that is not an option at all
// can never be admitted, and is reported so the node refuses the configuration.
func NewPolicy(extensions []string) (*Policy, error) {
	p := &Policy{extra: make(map[string]struct{}, len(extensions))}
	for _, e := range extensions {
		if reason := extensionProblem(e); reason != "" {
			return nil, fmt.Errorf("%w: %q: %s", ErrInvalidExtension, SanitizeArg(e), reason)
		}
		p.extra[e] = struct{}{}
	}
	return p, nil
}

// extensionProblem says why an extension could never be admitted, "" when it could.
func extensionProblem(e string) string {
	if e == "" || e[0] == '@' {
		return RuleResponseFile
	}
	if hasControl(e) {
		return RuleControlChar
	}
	// An entry applies to whichever family its introducer fits, so it must pass the screen of
	// every such family: the strictest reading wins.
	option := false
	for _, f := range []Family{FamilyGNU, FamilyMSVC} {
		if introducerLen(f, e) == 0 {
			continue
		}
		option = true
		if err := screenOne(f, 0, e); err != nil {
			var re *RejectedError
			errors.As(err, &re)
			return f.String() + " " + re.Rule
		}
	}
	if !option {
		return RuleNotAnOption
	}
	return ""
}

// Extensions returns the operator's entries, sorted, for the startup and reload WARN line.
func (p *Policy) Extensions() []string {
	out := make([]string, 0, len(p.extra))
	for e := range p.extra {
		out = append(out, e)
	}
	sort.Strings(out)
	return out
}

var defaultPolicy Policy

// Vet checks a dispatched job's arguments against the built-in tables for the worker's
// driver; nil means every argument is acceptable. The error is a *RejectedError naming the
// first refused argument.
func Vet(driver Flavor, args []string) error { return defaultPolicy.Vet(driver, args) }

// Vet checks args as the package-level Vet does, also accepting the policy's extensions for
// arguments the built-in tables do not recognise.
func (p *Policy) Vet(driver Flavor, args []string) error {
	for i := 0; i < len(args); {
		n, err := p.vetAt(driver, args, i)
		if err != nil {
			return err
		}
		i += n
	}
	return nil
}

// vetAt checks the argument at i and returns how many arguments it accounted for (2 for
// "-x <preprocessed language>").
func (p *Policy) vetAt(driver Flavor, args []string, i int) (int, error) {
	a := args[i]
	switch {
	case a == "":
		return 1, nil
	case a[0] == '@':
		return 0, reject(i, a, RuleResponseFile)
	case hasControl(a):
		return 0, reject(i, a, RuleControlChar)
	}
	if n, ok, err := preprocessedLanguage(driver, args, i); ok || err != nil {
		return n, err
	}
	if driver.IsClang() && isTargetFlag(a) {
		return 1, nil
	}
	if err := screenOne(driver.Family(), i, a); err != nil {
		return 0, err
	}
	f := driver.Family()
	if t := allowTableFor(f); t != nil && t.allows(a[introducerLen(f, a):]) {
		return 1, nil
	}
	if _, ok := p.extra[a]; ok {
		return 1, nil
	}
	return 0, reject(i, a, RuleNotAllowed)
}

// preprocessedLanguage accepts the driver's "input is preprocessed" spelling at i: GNU
// "-x <lang>" (two arguments) or "-x<lang>", MSVC "/TC", "/TP". A bare -x followed by anything
// else is refused here, so that -x can never re-type an input the worker did not expect.
func preprocessedLanguage(driver Flavor, args []string, i int) (int, bool, error) {
	a := args[i]
	langs := driver.PreprocessedLanguages()
	if driver.Family() == FamilyMSVC {
		return 1, contains(langs, a), nil
	}
	if a == "-x" {
		if i+1 < len(args) && contains(langs, args[i+1]) {
			return 2, true, nil
		}
		return 0, false, reject(i, a, RuleBadLanguage)
	}
	if lang, ok := strings.CutPrefix(a, "-x"); ok && contains(langs, lang) {
		return 1, true, nil
	}
	return 0, false, nil
}

// isTargetFlag accepts --target=<triple> with a triple of [A-Za-z0-9_.-], no separators.
func isTargetFlag(a string) bool {
	triple, ok := strings.CutPrefix(a, "--target=")
	return ok && len(triple) <= 128 && isWord(triple) && !strings.Contains(triple, "+")
}

// Prescreen is the client's check before it asks for a lease (pace-wire §3.9.1): every
// argument must be an option of the driver's family, carry no '@' and no path separator after
// its introducer, and hit no hard refusal. It does not consult the allowlist: a worker's
// operator extensions may accept what the built-in rows do not.
func Prescreen(driver Flavor, args []string) error {
	f := driver.Family()
	for i, a := range args {
		if a != "" && a[0] == '@' {
			return reject(i, a, RuleResponseFile)
		}
		if hasControl(a) {
			return reject(i, a, RuleControlChar)
		}
		if err := screenOne(f, i, a); err != nil {
			return err
		}
	}
	return nil
}

// screenOne applies the introducer, separator and hard-refusal checks to one argument.
func screenOne(f Family, i int, a string) error {
	if f == FamilyUnknown {
		return reject(i, a, RuleUnknownDriver)
	}
	n := introducerLen(f, a)
	if n == 0 {
		return reject(i, a, RuleNotAnOption)
	}
	stripped := a[n:]
	if strings.ContainsAny(stripped, `/\`) && !MacroDefinition(f, a) {
		return reject(i, a, RulePathSeparator)
	}
	if rule, hit := hardRefusal(f, stripped); hit {
		return reject(i, a, rule)
	}
	// gcc reads --plugin=x as -fplugin=x and --warn-a,x as -Wa,x: screen that reading too.
	if short := GNUShortForm(a); f == FamilyGNU && short != a {
		if rule, hit := hardRefusal(f, short[1:]); hit {
			return reject(i, a, rule)
		}
	}
	return nil
}

// MacroDefinition reports a GNU -D argument, whose value is macro text: a path in it names
// nothing the compiler opens (a gcc worker's directives-only text carries no #include a
// macro could feed, pace-wire §3.10), so it may hold separators. The name must still be an
// identifier, so the separator can only sit in the value.
func MacroDefinition(f Family, a string) bool {
	def, ok := strings.CutPrefix(a, "-D")
	if f != FamilyGNU || !ok {
		return false
	}
	name, _, _ := strings.Cut(def, "=")
	if i := strings.IndexByte(name, '('); i >= 0 {
		name = name[:i]
	}
	if name == "" || name[0] >= '0' && name[0] <= '9' {
		return false
	}
	for j := 0; j < len(name); j++ {
		c := name[j]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

func hasControl(a string) bool {
	for i := 0; i < len(a); i++ {
		if a[i] < 0x20 || a[i] == 0x7f {
			return true
		}
	}
	return false
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
