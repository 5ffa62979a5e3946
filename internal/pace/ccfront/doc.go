// Package ccfront is pace-cc's front: the small program every compile starts. It serves a
// direct-mode hit from this user's hit memo (internal/pace/hitmemo) with one exchange with the
// cache, and hands every other invocation — a miss, a memo that does not hold, a launcher
// flag, a link — unchanged to pace-cc-full, the whole of pace-cc (internal/pace/cc), by
// exec.
//
// The split exists for start-up time: a Go program pays at start for every package it links
// (their initialisers, and the runtime's walk over the binary's tables). The front links only
// what a hit needs — argument-free key derivation, stat and hash, one FETCH over a blocking
// socket, the value codec — so a hit starts in about the time of an empty Go program, while
// the dispatch, compression, signatures and reports stay in pace-cc-full, which a miss pays
// for once against a compile that costs a hundred times more (pace-wire §3.6).
package ccfront
