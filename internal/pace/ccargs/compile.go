package ccargs

import "strings"

// Mode is what a cacheable command produces.
type Mode uint8

// Modes.
const (
	ModeObject   Mode = iota + 1 // -c: an object file
	ModeAssembly                 // -S: assembler text (gcc stops at its earliest stage: -S beats -c)
)

// DepMode is the dependency output a compile writes.
type DepMode uint8

// Dependency modes. With both -MD and -MMD, gcc 12 writes the -MMD form.
const (
	DepNone DepMode = iota
	DepAll          // -MD: system headers included
	DepUser         // -MMD: system headers left out
)

// DepTarget is one target of the depfile's rule.
type DepTarget struct {
	Name   string
	Quoted bool // -MQ (and the implicit target): make-special characters are quoted
}

// Deps is how a compile writes its depfile. Targets are the build system's own names and are
// never respelled (pace-wire §2.3).
type Deps struct {
	Mode            DepMode
	File            string // the depfile a compile writes: -MF, or gcc's rule from -o
	FileExplicit    bool   // File came from -MF
	Targets         []DepTarget
	TargetsImplicit bool // no -MT/-MQ: the target is the output (or source.o)
	Phony           bool // -MP
}

// Debug is the debug information a compile emits.
type Debug struct {
	Level  int  // 0 none, 1 line tables, 2 default, 3 with macros; the last -g option wins
	Macros bool // macro definitions recorded (-g3, clang -fdebug-macro)
	// DWARF is the version the command asks for: the last -gdwarf-N, else clang's
	// -fdebug-default-version=N; 0 leaves it to the compiler (5 for gcc 11 and later).
	DWARF   int
	Columns Columns // the last -gcolumn-info or -gno-column-info
}

// Columns is whether DWARF records source columns.
type Columns uint8

// Column settings. ColumnsDefault leaves it to the compiler, which records them (gcc 8 and
// later, clang).
const (
	ColumnsDefault Columns = iota
	ColumnsOn
	ColumnsOff
)

// PrefixMap is one -f*-prefix-map=OLD=NEW, split at the last '=' (pace-wire §3.3). gcc itself
// splits at the first; the split only decides which half is relativized in the key, and
// either split keys every distinct argument apart.
type PrefixMap struct {
	Flag string // e.g. "-fdebug-prefix-map="
	Old  string
	New  string
}

// IncludePath is a path-valued preprocessor option: -I, -iquote, -isystem, -idirafter,
// -include, -imacros, -iprefix, --sysroot, -isysroot, -F and their long spellings.
type IncludePath struct {
	Flag string
	Path string
}

// ColorMode is the diagnostics colouring the command asks for; the last option wins.
type ColorMode uint8

// Colour modes. ColorDefault leaves it to the compiler, which colours only a terminal.
const (
	ColorDefault ColorMode = iota
	ColorAlways
	ColorNever
	ColorAuto
)

// Compile is a cacheable command line: one translation unit compiled to a named output.
type Compile struct {
	Driver         Driver
	Args           []string // the arguments after the compiler, as given
	Cwd            string
	Roots          Roots
	Mode           Mode
	Source         string // as spelled on the command line
	Output         string // as spelled, or the implicit one (OutputImplicit)
	OutputImplicit bool   // no -o: the driver's default, cwd/basename.o (Invocation.ImplicitOutput)
	Language       Language
	LanguageForced bool // from -x rather than the source's extension
	Deps           Deps
	Debug          Debug
	PrefixMaps     []PrefixMap
	IncludePaths   []IncludePath
	Color          ColorMode
	compDirSet     bool // clang -fdebug-compilation-dir= or -ffile-compilation-dir=
	tokens         []token
	source         int // index of the source's token
}

// CompDirRecorded reports whether the object records the working directory: with debug
// information, DW_AT_comp_dir is the cwd unless a -fdebug-prefix-map/-ffile-prefix-map OLD is
// a prefix of it (gcc compares plain prefixes) or clang is told the directory. When it
// does, the cwd (relativized) must be part of the key.
func (c *Compile) CompDirRecorded() bool {
	if c.Debug.Level == 0 || c.compDirSet {
		return false
	}
	if c.Cwd == "" {
		return true
	}
	for _, m := range c.PrefixMaps {
		if (m.Flag == "-fdebug-prefix-map=" || m.Flag == "-ffile-prefix-map=") && strings.HasPrefix(c.Cwd, m.Old) {
			return false
		}
	}
	return true
}

// RelativePaths lists the source and the path-valued option values spelled relative to the
// working directory: what a direct-mode lookup must resolve against cwd.
func (c *Compile) RelativePaths() []string {
	var out []string
	for _, t := range c.tokens {
		isPath := t.kind == tokOperand || (t.kind == tokOption && t.opt.path)
		if isPath && t.value != "" && !strings.HasPrefix(t.value, "/") {
			out = append(out, t.value)
		}
	}
	return out
}
