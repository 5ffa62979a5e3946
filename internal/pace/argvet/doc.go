// Package argvet is the compile worker's allowlist of argument shapes, per driver family
// (pace-wire §3.10, pace-node §5.5).
//
// A dispatched job's arguments are spliced into a compiler command line the worker runs as its
// own service account, and several driver options exist only to run another program or load
// code (-wrapper, -fplugin=, -fpass-plugin=, -Xclang -load, -specs=, -B, -fmodule-mapper=).
// None of them needs a path separator, so asking "could this name a file?" is not enough. The
// worker therefore accepts only the shapes it knows: optimisation, language, defines, warnings,
// machine options, enumerated debug flags and -f flags enumerated one by one, never by prefix.
// Anything else is refused, naming the argument: an unknown flag costs one local compile, a
// missed dangerous one would be code execution.
//
// Order of the checks for each argument: empty accepts; a leading '@' refuses; the
// preprocessed-input language spelling (-x cpp-output and friends, /TC, /TP) and --target=
// (clang drivers) accept; the argument must start with an introducer of its family ('-' for
// GNU, '/' or '-' for MSVC); one introducer is stripped; a path separator in the remainder
// refuses; hard refusals (denial rows and side-artefact writers, prefix-matched, never
// overridable) refuse; then the allowlist; then the operator's exact-match extensions
// (--allow-compile-arg); nothing matched refuses. gcc still reads unlisted long spellings
// through its old option map (--plugin=x is -fplugin=x, --warn-a,x is -Wa,x), so hard
// refusals are screened under that reading too (GNUShortForm).
//
// The client (ccargs) uses Prescreen before it asks for a lease; the worker uses Vet or a
// Policy built from its configuration.
package argvet
