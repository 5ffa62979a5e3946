// Package ccargs takes a gcc or clang command line apart (pace-wire §3, pace-wire §5.7): which
// driver it names, whether it compiles exactly one translation unit to an explicitly named
// object (cacheable) or must pass through to the real compiler untouched (with a short, stable
// reason for the statistics), and for a cacheable line its source, output, language,
// dependency-file options, debug level, prefix maps, include paths and working-directory
// sensitivity.
//
// From a classified Compile it derives the commands pace-cc runs and the argument lists it
// hashes: the key probe (preprocess with line markers kept, plus a scratch depfile), the
// dispatch preprocess, the relativized key arguments (paths under the source and build roots
// become <SRCROOT>/… and <BUILDTREE>/… tokens), and the argument list a remote worker is sent,
// screened by argvet before any lease is asked for.
//
// Options are matched against one table, longest spelling first; an option that takes a value
// accepts it joined (-Ifoo, --sysroot=x) or as the next argument (-I foo, --sysroot x), as the
// GNU drivers do. The package is pure: no file system, no environment, no processes.
package ccargs
