package ccargs

import "strings"

// tokenKind says what an argument (or argument pair) is.
type tokenKind uint8

const (
	tokOperand tokenKind = iota // an input file
	tokOption                   // an option the table describes
	tokUnknown                  // an option the table does not describe: kept verbatim, no value
)

// token is one argument, or an option and the value it took from the next argument.
type token struct {
	kind  tokenKind
	pos   int // index in the argument list of the first argument
	n     int // arguments taken: 1, or 2 when the value was the next argument
	opt   *option
	value string // the option's value, the operand itself, or an unknown option's short form
}

// spelled returns the arguments of t with its value replaced, keeping the form it was given in
// (joined or separate).
func (t token) spelled(args []string, value string) []string {
	switch {
	case t.kind == tokOperand:
		return []string{value}
	case t.opt == nil:
		return []string{args[t.pos]}
	case t.n == 2:
		return []string{args[t.pos], value}
	}
	return []string{t.opt.joinedSpelling(value)}
}

// verbatim returns the arguments of t as given.
func (t token) verbatim(args []string) []string { return args[t.pos : t.pos+t.n] }

// tokenize splits args into tokens by the option table. Response files pass through wherever
// they appear: the GNU drivers expand @file before they parse anything.
func tokenize(args []string, f Flavor) ([]token, *PassthroughError) {
	for _, a := range args {
		if strings.HasPrefix(a, "@") {
			return nil, passthrough(ReasonResponseFile, a)
		}
	}
	toks := make([]token, 0, len(args))
	for i := 0; i < len(args); {
		a := args[i]
		if a == "" || a == "-" || a[0] != '-' {
			toks = append(toks, token{kind: tokOperand, pos: i, n: 1, value: a})
			i++
			continue
		}
		o, value, next := gnuOptions().match(a, f)
		if o == nil && shortForm(a) != a {
			o, value, next = gnuOptions().match(shortForm(a), f)
		}
		switch {
		case o == nil:
			toks = append(toks, token{kind: tokUnknown, pos: i, n: 1, value: shortForm(a)})
			i++
		case next && i+1 >= len(args):
			return nil, passthrough(ReasonMissingValue, a)
		case next:
			toks = append(toks, token{kind: tokOption, pos: i, n: 2, opt: o, value: args[i+1]})
			i += 2
		default:
			toks = append(toks, token{kind: tokOption, pos: i, n: 1, opt: o, value: value})
			i++
		}
	}
	return toks, nil
}
