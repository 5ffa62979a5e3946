// Package hitmemo is the format of pace-cc's hit memo: what this user's last successful direct
// lookup of one compile command found, so that the next run of the same command can be served
// by the small front binary without classifying the arguments, identifying the compiler or
// reading a manifest (pace-wire §3.6).
//
// A memo is filed under an invocation key that covers the command exactly as it was given —
// the resolved compiler path, the working directory, every argument and the environment that
// changes a compile or its keys — and records the compiler's stat, the object key, the
// outputs, and every input file with its content hash and its stat when the memo was written.
// A memo is only a hint: every file is checked again before it is trusted, and a memo that
// does not hold sends the command to the full pace-cc.
//
// The package is a pure core: keys, the codec and the trust rule, no I/O.
package hitmemo
