package ccargs

import "strings"

// Depend mode (pace-wire §3.6.1): a local miss is compiled once, with a depfile, and the
// headers that depfile lists key the result; no preprocessor runs first. These are the parts
// of that decision the command line alone settles.

// Reasons a command cannot be keyed from its depfile. Each is a short stable phrase: pace-cc
// prints it in its verbose note and counts it.
const (
	NoDependRecordsCommand = "the object records the command line, which the private depfile would change"
	NoDependDiscarded      = "the command sends its depfile to /dev/null"
)

// PrivateDepfile reports whether depend mode must add its own -MD -MF: the command writes no
// depfile of its own. With one (-MD or -MMD, whatever -MF/-MT/-MQ/-MP go with it), the
// command runs unchanged and its own depfile is read back.
func (c *Compile) PrivateDepfile() bool { return c.Deps.Mode == DepNone }

// DependRefusal is why this command cannot be keyed from its depfile, or "" when it can.
// -E, -M, -MM and -MG never get here: they pass through at Classify.
func (c *Compile) DependRefusal() string {
	switch {
	case c.PrivateDepfile() && c.recordsCommandLine():
		return NoDependRecordsCommand
	case !c.PrivateDepfile() && c.Deps.File == "/dev/null":
		return NoDependDiscarded
	}
	return ""
}

// DependArgs is the command a depend-mode miss runs: the arguments as given, plus
// "-MD -MF privateDepfile" when the command writes no depfile (gcc 12 objects, warnings and
// debug information are unchanged by them, checked with -g and -frecord-gcc-switches). The
// private depfile lists system headers too, so they are keyed as well.
func (c *Compile) DependArgs(privateDepfile string) []string {
	out := append(make([]string, 0, len(c.Args)+3), c.Args...)
	if c.PrivateDepfile() {
		out = append(out, "-MD", "-MF", privateDepfile)
	}
	return out
}

// DependFile is the depfile a depend-mode miss reads back: the command's own, or the private
// one.
func (c *Compile) DependFile(privateDepfile string) string {
	if c.PrivateDepfile() {
		return privateDepfile
	}
	return c.Deps.File
}

// recordsCommandLine reports whether the object would carry the command line itself: clang's
// -frecord-command-line and -grecord-command-line (which it also spells -f/-grecord-gcc-switches)
// put every argument, a private depfile's path included, into the object. gcc's
// -frecord-gcc-switches and its default -grecord-gcc-switches leave the -M options out
// (checked), so only clang counts. The last of an option and its -no- form wins.
func (c *Compile) recordsCommandLine() bool {
	if !c.Driver.Flavor.IsClang() {
		return false
	}
	on := false
	for _, t := range c.tokens {
		if t.kind != tokUnknown {
			continue
		}
		switch a := c.Args[t.pos]; {
		case isRecordSwitch(a, "-frecord-"), isRecordSwitch(a, "-grecord-"):
			on = true
		case isRecordSwitch(a, "-fno-record-"), isRecordSwitch(a, "-gno-record-"):
			on = false
		}
	}
	return on
}

func isRecordSwitch(a, prefix string) bool {
	rest, ok := strings.CutPrefix(a, prefix)
	return ok && (rest == "command-line" || rest == "gcc-switches")
}
