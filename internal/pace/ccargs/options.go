package ccargs

import (
	"sort"
	"strings"
)

// arity says how an option takes its value.
type arity uint8

const (
	flagArity        arity = iota + 1 // the exact spelling, no value
	joined                            // the spelling is a prefix; the value is the rest
	separate                          // the exact spelling; the value is the next argument
	joinedOrSeparate                  // -Ifoo, or -I foo
	eqOrSeparate                      // --sysroot=x, or --sysroot x
)

// role is what an option means to the classifier and to the commands derived from it.
type role uint8

const (
	roleOther       role = iota // kept everywhere, verbatim
	roleOutput                  // -o
	roleCompile                 // -c
	roleAssemble                // -S
	roleLanguage                // -x
	roleDepMD                   // -MD
	roleDepMMD                  // -MMD
	roleDepFile                 // -MF
	roleDepTarget               // -MT
	roleDepQuoted               // -MQ
	roleDepPhony                // -MP
	rolePreproc                 // affects preprocessing only: -I, -D, -include, --sysroot, ...
	roleNoLineMarks             // -P: dropped from the probes, which must keep line markers
	roleDebugMap                // -fdebug-prefix-map=, -ffile-prefix-map=
	roleOtherMap                // -fmacro-prefix-map= and friends
	roleCompDir                 // clang -fdebug-compilation-dir= and -ffile-compilation-dir=
	roleLinkOnly                // link-time only: -l, -L, -Wl, ...; no effect on a compile
	roleTarget                  // clang -target / --target=
	roleArch                    // clang -arch
	roleXclang                  // -Xclang
	roleAssembler               // -Wa, and -Xassembler
	roleListAll                 // -M: list every header as make rules instead of compiling
	roleListUser                // -MM: the same, leaving out system headers
)

// option is one row of the command-line table.
type option struct {
	name  string
	arity arity
	role  role
	path  bool   // the value is a file system path: relativized for keys, never dispatched
	clang bool   // a clang-only spelling; gcc parses the argument by its other rows
	alias string // canonical joined spelling for dispatch, e.g. "-D" for --define-macro
	// reason, when set, makes the whole command pass through.
	reason Reason
	// check, when set, inspects the value and may name a reason to pass through.
	check func(value string) Reason
}

// optionIndex holds the table by the first two bytes of each spelling, longest first, so the
// longest spelling that matches wins (-MMD before -MD before -M, -include-pch before -include).
type optionIndex map[string][]*option

func newOptionIndex(rows []option) optionIndex {
	idx := make(optionIndex)
	for i := range rows {
		o := &rows[i]
		idx[o.name[:2]] = append(idx[o.name[:2]], o)
	}
	for _, list := range idx {
		sort.SliceStable(list, func(i, j int) bool { return len(list[i].name) > len(list[j].name) })
	}
	return idx
}

// match finds the row for arg. It returns the row, the joined value (when the value is glued
// to the spelling) and whether the value is the next argument instead.
func (idx optionIndex) match(arg string, f Flavor) (o *option, value string, next bool) {
	if len(arg) < 2 {
		return nil, "", false
	}
	for _, o := range idx[arg[:2]] {
		if o.clang && f != FlavorClang {
			continue
		}
		if v, n, ok := o.accepts(arg); ok {
			return o, v, n
		}
	}
	return nil, "", false
}

// accepts matches one row against arg.
func (o *option) accepts(arg string) (value string, next bool, ok bool) {
	switch o.arity {
	case flagArity:
		return "", false, arg == o.name
	case separate:
		return "", true, arg == o.name
	case joined:
		v, found := strings.CutPrefix(arg, o.name)
		return v, false, found
	case joinedOrSeparate:
		if arg == o.name {
			return "", true, true
		}
		v, found := strings.CutPrefix(arg, o.name)
		return v, false, found
	case eqOrSeparate:
		if arg == o.name {
			return "", true, true
		}
		v, found := strings.CutPrefix(arg, o.name+"=")
		return v, false, found
	}
	return "", false, false
}

// joinedSpelling is how the value is glued to the option: "name=value" for eqOrSeparate
// rows, "namevalue" otherwise.
func (o *option) joinedSpelling(value string) string {
	if o.arity == eqOrSeparate {
		return o.name + "=" + value
	}
	return o.name + value
}
