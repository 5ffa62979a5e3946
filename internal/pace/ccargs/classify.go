package ccargs

import "strings"

// Invocation is a compiler command line as pace-cc received it.
type Invocation struct {
	Compiler string   // argv[0] of the real compiler: a path or a name
	Driver   Driver   // zero: classified from Compiler's basename; set it to override (cc as Clang)
	Args     []string // the arguments after the compiler
	Cwd      string   // the working directory the compile runs in
	Roots    Roots    // optional: relativize paths under them in the key
	// ImplicitOutput caches "-c foo.c" without -o, whose object the driver names cwd/foo.o.
	// Off by default: pace-wire §3.3 passes such lines through (the default output path is
	// not reconstructed), though Lua's and Redis's makefiles compile several files that way.
	ImplicitOutput bool
}

// Classify decides whether inv is cacheable. It returns the Compile, or a *PassthroughError
// (matching ErrPassthrough) whose Reason names why the command must run uncached.
func Classify(inv Invocation) (*Compile, error) {
	d, pe := classifyDriver(inv)
	if pe != nil {
		return nil, pe
	}
	w, pe := walk(inv, d)
	if pe != nil {
		return nil, pe
	}
	return w.finish()
}

// classifyDriver is the invocation's driver, refusing anything but a GNU-style one.
func classifyDriver(inv Invocation) (Driver, *PassthroughError) {
	d := inv.Driver
	if d.Flavor == 0 {
		var ok bool
		if d, ok = ClassifyDriver(inv.Compiler); !ok {
			return d, passthrough(ReasonNotCompiler, inv.Compiler)
		}
	}
	if d.Family() != FamilyGNU {
		return d, passthrough(ReasonMSVCDriver, d.Name)
	}
	return d, nil
}

// walk tokenizes the arguments and visits every token, stopping at the first that passes the
// command through.
func walk(inv Invocation, d Driver) (*walker, *PassthroughError) {
	toks, pe := tokenize(inv.Args, d.Flavor)
	if pe != nil {
		return nil, pe
	}
	w := &walker{inv: inv, driver: d, toks: toks, output: -1}
	for i := range toks {
		if pe := w.visit(i); pe != nil {
			return nil, pe
		}
	}
	return w, nil
}

// walker accumulates what the tokens say, in order.
type walker struct {
	inv    Invocation
	driver Driver
	toks   []token
	lang   Language // the -x in force; LangNone: by extension
	// sourceLang is the first source's language, sourceForced whether -x gave it.
	sourceLang   Language
	sourceForced bool
	sources      []int
	output       int // token of the last -o, -1 when none
	outputs      int
	compile      bool
	assemble     bool
	arches       int
	md, mmd      bool
	depFile      string
	depFileT     bool
	targets      []DepTarget
	phony        bool
	debugLevel   int
	debugMacro   bool
	dwarf        int // the last -gdwarf-N
	dwarfDefault int // clang's -fdebug-default-version=N
	columns      Columns
	color        ColorMode
	maps         []PrefixMap
	includes     []IncludePath
	compDir      bool
	listing      Listed // the last -M or -MM; ListNone when neither
}

func (w *walker) arg(t token) string { return w.inv.Args[t.pos] }

func (w *walker) visit(i int) *PassthroughError {
	t := w.toks[i]
	switch t.kind {
	case tokOperand:
		return w.operand(i, t)
	case tokUnknown:
		return w.unknown(t.value)
	}
	if t.opt.reason != "" {
		return passthrough(t.opt.reason, w.arg(t))
	}
	if t.opt.check != nil {
		if r := t.opt.check(t.value); r != "" {
			return passthrough(r, w.arg(t))
		}
	}
	if t.opt.path && spellsToken(t.value) {
		return passthrough(ReasonAmbiguousToken, t.value)
	}
	w.option(i, t)
	return nil
}

// operand classifies an input by the -x in force or its extension.
func (w *walker) operand(i int, t token) *PassthroughError {
	p := t.value
	switch {
	case p == "-":
		return passthrough(ReasonStdinSource, p)
	case spellsToken(p):
		return passthrough(ReasonAmbiguousToken, p)
	}
	if l, _ := languageFromExt(p, false); l == LangModuleInterface {
		return passthrough(ReasonModuleInterface, p)
	}
	lang := w.lang
	if lang == LangNone {
		var known bool
		if lang, known = languageFromExt(p, w.driver.CXX); !known {
			return passthrough(ReasonNonSourceInput, p)
		}
	}
	if !lang.cacheable() {
		return passthrough(lang.notCacheableReason(), p)
	}
	if len(w.sources) == 0 {
		w.sourceLang, w.sourceForced = lang, w.lang != LangNone
	}
	w.sources = append(w.sources, i)
	return nil
}

// option records what a table row means.
func (w *walker) option(i int, t token) {
	switch t.opt.role {
	case roleOutput:
		w.output, w.outputs = i, w.outputs+1
	case roleCompile:
		w.compile = true
	case roleAssemble:
		w.assemble = true
	case roleLanguage:
		w.lang = languageFromX(t.value)
	case roleArch:
		w.arches++
	case roleDebugMap, roleOtherMap:
		w.maps = append(w.maps, splitPrefixMap(t.opt.name, t.value))
	case roleCompDir:
		w.compDir = true
	case roleListAll:
		w.listing = ListAll
	case roleListUser:
		w.listing = ListUser
	case rolePreproc:
		if t.opt.path {
			w.includes = append(w.includes, IncludePath{Flag: t.opt.name, Path: t.value})
		}
	default:
		w.depOption(t)
	}
}

func (w *walker) depOption(t token) {
	switch t.opt.role {
	case roleDepMD:
		w.md = true
	case roleDepMMD:
		w.mmd = true
	case roleDepFile:
		w.depFile, w.depFileT = t.value, true
	case roleDepTarget:
		w.targets = append(w.targets, DepTarget{Name: t.value})
	case roleDepQuoted:
		w.targets = append(w.targets, DepTarget{Name: t.value, Quoted: true})
	case roleDepPhony:
		w.phony = true
	}
}

// splitPrefixMap splits OLD=NEW at the last '=' (pace-wire §3.3).
func splitPrefixMap(flag, v string) PrefixMap {
	if i := strings.LastIndexByte(v, '='); i >= 0 {
		return PrefixMap{Flag: flag, Old: v[:i], New: v[i+1:]}
	}
	return PrefixMap{Flag: flag, Old: v}
}
