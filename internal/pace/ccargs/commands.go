package ccargs

// The argument lists pace-cc derives from a Compile. Each is the argument list after the
// compiler; the caller runs it with the same compiler in c.Cwd.

// probeDropped are the roles the preprocessing commands leave out: the output and compile
// stage (the probe writes to stdout), every dependency option (the key probe asks for its own
// depfile), and -P, because the key must capture line layout: a comment added above a function
// moves its line numbers in the object and in warnings.
func probeDropped(t token) bool {
	if t.kind != tokOption {
		return false
	}
	switch t.opt.role {
	case roleOutput, roleCompile, roleAssemble, roleDepMD, roleDepMMD, roleDepFile,
		roleDepTarget, roleDepQuoted, roleDepPhony, roleNoLineMarks:
		return true
	}
	return false
}

func (c *Compile) withoutProbeDropped() []string {
	out := make([]string, 0, len(c.Args)+4)
	for _, t := range c.tokens {
		if !probeDropped(t) {
			out = append(out, t.verbatim(c.Args)...)
		}
	}
	return out
}

// KeyProbeArgs is the key probe (pace-wire §3.5, with pace's change): the command preprocessed
// to stdout with line markers kept (-E, never -P), its dependencies written to scratchDepfile
// (-MD -MF). Everything else, the source included, stays as given.
func (c *Compile) KeyProbeArgs(scratchDepfile string) []string {
	return append(c.withoutProbeDropped(), "-E", "-MD", "-MF", scratchDepfile)
}

// DepProbeArgs is the key probe that also writes, to scratchDepfile, the depfile the compile
// itself would write: the command's own dependency options (-MD/-MMD, -MT/-MQ, -MP) are kept,
// -MF is pointed at the scratch file, and where the compile's target would come from -o (which
// the probe drops) an explicit -MQ names it as gcc would. A compile without dependency options
// gets -MD, as in KeyProbeArgs. pace-cc uses it so a dispatched compile, whose worker saw no
// headers, still writes exactly the local depfile.
func (c *Compile) DepProbeArgs(scratchDepfile string) []string {
	if c.Deps.Mode == DepNone {
		return c.KeyProbeArgs(scratchDepfile)
	}
	out := make([]string, 0, len(c.Args)+8)
	for _, t := range c.tokens {
		switch {
		case t.kind == tokOption && t.opt.role == roleDepFile:
		case t.kind == tokOption && isDepRole(t.opt.role):
			out = append(out, t.verbatim(c.Args)...)
		case !probeDropped(t):
			out = append(out, t.verbatim(c.Args)...)
		}
	}
	if c.Deps.TargetsImplicit {
		out = append(out, "-MQ", c.Output)
	}
	return append(out, "-E", "-MF", scratchDepfile)
}

func isDepRole(r role) bool {
	switch r {
	case roleDepMD, roleDepMMD, roleDepTarget, roleDepQuoted, roleDepPhony:
		return true
	}
	return false
}

// DispatchPreprocessArgs is the dispatch preprocess (pace-wire §3.9.1): the command
// preprocessed to stdout with line markers, no dependency probe. Its stdout is what a clang
// worker compiles (RemotePreprocessed); a gcc worker gets the key probe's text bundled.
func (c *Compile) DispatchPreprocessArgs() []string {
	return append(c.withoutProbeDropped(), "-E")
}

// KeyArgs are the arguments as they enter the object key (pace-wire §3.5): in order, with the
// source and every path-valued option value under a root relativized to <SRCROOT>/… or
// <BUILDTREE>/… (with no roots every argument stays verbatim, absolute paths included). For a
// prefix map only the OLD half is relativized; the replacement stays literal so differing
// mappings key apart. Left out, because they do not change what a compile produces:
//   - the -o value, unless the depfile's target is derived from it (no -MT/-MQ), in which
//     case it is kept verbatim, as the target text is (checked: gcc 12 objects do not depend
//     on the output name, with or without -g);
//   - the -MF value: where the depfile goes, not what it says.
//
// Kept verbatim, never relativized: -MT/-MQ targets (they are written into the depfile as
// given and a hit never respells them), -MD/-MMD/-MP (they change the depfile), -c/-S, -x.
func (c *Compile) KeyArgs() []string {
	out := make([]string, 0, len(c.Args))
	for _, t := range c.tokens {
		out = append(out, c.keySpelling(t)...)
	}
	return out
}

func (c *Compile) keySpelling(t token) []string {
	switch {
	case t.kind == tokOperand:
		return t.spelled(c.Args, c.Roots.Relativize(t.value))
	case t.kind == tokUnknown:
		return t.verbatim(c.Args)
	}
	switch t.opt.role {
	case roleOutput:
		if c.Deps.Mode != DepNone && c.Deps.TargetsImplicit {
			return t.verbatim(c.Args)
		}
		return nil
	case roleDepFile:
		return nil
	case roleDebugMap, roleOtherMap:
		m := splitPrefixMap(t.opt.name, t.value)
		if m.Old == t.value { // no '=': nothing to split, relativize the whole value
			return t.spelled(c.Args, c.Roots.Relativize(t.value))
		}
		return t.spelled(c.Args, c.Roots.Relativize(m.Old)+"="+m.New)
	}
	if t.opt.path {
		return t.spelled(c.Args, c.Roots.Relativize(t.value))
	}
	return t.verbatim(c.Args)
}
