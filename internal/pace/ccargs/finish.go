package ccargs

import "strings"

// finish applies the whole-line rules of pace-wire §3.3 and builds the Compile.
func (w *walker) finish() (*Compile, error) {
	if pe := w.checkShape(); pe != nil {
		return nil, pe
	}
	src := w.toks[w.sources[0]]
	c := &Compile{
		Driver: w.driver, Args: append([]string(nil), w.inv.Args...), Cwd: w.inv.Cwd,
		Roots: w.inv.Roots, Mode: ModeObject, Source: src.value, source: w.sources[0],
		Language: w.sourceLang, LanguageForced: w.sourceForced, Color: w.color,
		PrefixMaps: w.maps, IncludePaths: w.includes, compDirSet: w.compDir, tokens: w.toks,
		Debug: w.debug(),
	}
	if w.assemble {
		c.Mode = ModeAssembly // gcc stops at the earliest stage asked for
	}
	if w.output >= 0 {
		c.Output = w.toks[w.output].value
	} else {
		c.Output, c.OutputImplicit = implicitOutput(c.Source, c.Mode), true
	}
	c.Deps = w.deps(c)
	return c, nil
}

// debug is the debug information the options asked for, the last of each kind winning.
func (w *walker) debug() Debug {
	d := Debug{Level: w.debugLevel, Macros: w.debugLevel == 3 || (w.debugMacro && w.debugLevel > 0),
		DWARF: w.dwarf, Columns: w.columns}
	if d.DWARF == 0 {
		d.DWARF = w.dwarfDefault
	}
	return d
}

// checkShape: exactly one translation unit, compiled (not linked), to exactly one named
// output, for at most one -arch, with a depfile gcc can write.
func (w *walker) checkShape() *PassthroughError {
	switch {
	case w.listing != ListNone:
		return passthrough(ReasonPreprocessOnly, "") // -M implies -E: not a compile
	case !w.compile && !w.assemble:
		return passthrough(ReasonLink, "")
	case len(w.sources) == 0:
		return passthrough(ReasonNoSource, "")
	case len(w.sources) > 1:
		return passthrough(ReasonMultipleSources, w.toks[w.sources[1]].value)
	case w.outputs > 1:
		return passthrough(ReasonMultipleOutputs, "")
	case w.outputs == 0 && !w.inv.ImplicitOutput:
		return passthrough(ReasonNoOutput, "")
	case w.output >= 0 && w.toks[w.output].value == "-":
		return passthrough(ReasonOutputToStdout, "-")
	case w.output >= 0 && w.toks[w.output].value == "":
		return passthrough(ReasonNoOutput, "")
	case w.arches > 1:
		return passthrough(ReasonMultipleArch, "")
	case !w.md && !w.mmd && (w.depFileT || len(w.targets) > 0 || w.phony):
		// gcc 12 fails such a compile ("to generate dependencies you must specify -M or -MM")
		return passthrough(ReasonDepWithoutMD, "")
	case (w.md || w.mmd) && w.depFileT && (w.depFile == "-" || w.depFile == ""):
		return passthrough(ReasonDepToStdout, w.depFile)
	}
	return nil
}

// deps reproduces gcc's depfile naming: -MF if given (the last one wins), else the output
// with its suffix replaced by .d, else the source's basename with .d; the target is every
// -MT/-MQ in order, else the output as -MQ would quote it, else the source's basename with .o.
func (w *walker) deps(c *Compile) Deps {
	d := Deps{Phony: w.phony, Targets: w.targets, File: w.depFile, FileExplicit: w.depFileT}
	switch {
	case w.mmd:
		d.Mode = DepUser // gcc 12 writes the -MMD form when both are given
	case w.md:
		d.Mode = DepAll
	default:
		return Deps{}
	}
	if !d.FileExplicit {
		if c.OutputImplicit {
			d.File = stripSuffix(basename(c.Source)) + ".d"
		} else {
			d.File = stripSuffix(c.Output) + ".d"
		}
	}
	if len(d.Targets) == 0 {
		d.TargetsImplicit = true
		name := c.Output
		if c.OutputImplicit {
			name = stripSuffix(basename(c.Source)) + ".o" // cc1's own default, even for -S
		}
		d.Targets = []DepTarget{{Name: name, Quoted: true}}
	}
	return d
}

// implicitOutput is the driver's output name without -o: the source's basename with its
// suffix replaced, in the working directory.
func implicitOutput(source string, m Mode) string {
	if m == ModeAssembly {
		return stripSuffix(basename(source)) + ".s"
	}
	return stripSuffix(basename(source)) + ".o"
}

func basename(p string) string { return p[strings.LastIndexByte(p, '/')+1:] }

// stripSuffix drops the last '.' and what follows it within the last path component, as
// gcc's %.d substitution does (".hidden" becomes "", "dir.x/y" stays).
func stripSuffix(p string) string {
	for i := len(p) - 1; i >= 0 && p[i] != '/'; i-- {
		if p[i] == '.' {
			return p[:i]
		}
	}
	return p
}
