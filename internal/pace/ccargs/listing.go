package ccargs

// Listed is the kind of dependency listing a command asks for.
type Listed uint8

const (
	ListNone Listed = iota
	ListAll         // -M: every header, system ones included
	ListUser        // -MM: system headers left out
)

// Listing is a dependency listing (pace-wire §3.6.2): `gcc -M`/`-MM` over one or more sources,
// which preprocesses each and prints make rules instead of compiling. Makefiles run one to
// generate their dependency file, often over every source at once and before anything else
// can start, so it is worth caching although it produces no object.
type Listing struct {
	Driver  Driver
	Args    []string // the arguments after the compiler, as given
	Cwd     string
	Kind    Listed
	Sources []string // in order: the rules come out in this order
	// Dest is where the rules go: the -MF file, else the -o file, else "" for standard output.
	Dest string
}

// ClassifyListing decides whether inv is a dependency listing pace-cc can cache. The vetting
// is Classify's (every option row applies), with the shape rules of a listing instead of a
// compile's. It returns a *PassthroughError otherwise.
func ClassifyListing(inv Invocation) (*Listing, error) {
	d, pe := classifyDriver(inv)
	if pe != nil {
		return nil, pe
	}
	w, pe := walk(inv, d)
	if pe != nil {
		return nil, pe
	}
	if pe := w.checkListingShape(); pe != nil {
		return nil, pe
	}
	l := &Listing{Driver: d, Args: append([]string(nil), inv.Args...), Cwd: inv.Cwd, Kind: w.listing}
	for _, i := range w.sources {
		l.Sources = append(l.Sources, w.toks[i].value)
	}
	switch {
	case w.depFileT:
		l.Dest = w.depFile
	case w.output >= 0:
		l.Dest = w.toks[w.output].value
	}
	if l.Dest == "-" {
		l.Dest = ""
	}
	return l, nil
}

// checkListingShape: -M or -MM without a compile stage or a depfile-writing compile, over at
// least one source, the rules going to exactly one place, no forced include. Where gcc would write several files
// to one destination (several sources to a named file) or name two destinations, the command
// runs uncached rather than be reproduced.
func (w *walker) checkListingShape() *PassthroughError {
	switch {
	case w.listing == ListNone:
		return passthrough(ReasonNotListing, "")
	case w.compile || w.assemble:
		return passthrough(ReasonListingShape, "-M with -c or -S")
	case w.md || w.mmd:
		return passthrough(ReasonListingShape, "-M with -MD or -MMD")
	case len(w.sources) == 0:
		return passthrough(ReasonNoSource, "")
	case w.outputs > 1:
		return passthrough(ReasonMultipleOutputs, "")
	case w.depFileT && w.outputs == 1:
		return passthrough(ReasonListingShape, "-MF with -o")
	case w.depFileT && w.depFile == "":
		return passthrough(ReasonNoOutput, "")
	case (w.depFileT || w.outputs == 1) && len(w.sources) > 1 && w.destination() != "-":
		return passthrough(ReasonListingShape, "several sources to one file")
	case w.arches > 1:
		return passthrough(ReasonMultipleArch, "")
	case w.forcedInclude() != "":
		// gcc's -H does not trace a forced include or what it includes in turn.
		return passthrough(ReasonListingShape, w.forcedInclude())
	}
	return nil
}

// forcedInclude is the first -include or -imacros, as spelled, or "".
func (w *walker) forcedInclude() string {
	for _, inc := range w.includes {
		switch inc.Flag {
		case "-include", "--include", "-imacros", "--imacros":
			return inc.Flag
		}
	}
	return ""
}

// destination is the listing's named destination as written, or "" for none.
func (w *walker) destination() string {
	if w.depFileT {
		return w.depFile
	}
	if w.output >= 0 {
		return w.toks[w.output].value
	}
	return ""
}

// TraceArgs is the listing as given with -H added: the compiler then also names, on standard
// error, every file it reads, which the rules of -MM leave out (system headers) but which
// decide them all the same.
func (l *Listing) TraceArgs() []string {
	return append(append(make([]string, 0, len(l.Args)+1), l.Args...), "-H")
}
