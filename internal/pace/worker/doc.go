// Package worker is pace-node's compile port: what answers COMPILE
// (pace-node §5, pace-wire §1.13, pace-wire §3.10).
//
// A Worker owns the slots it registers (one goroutine per admitted compile,
// nothing queued: request slots+1 is refused no-capacity at once), the
// in-flight byte budget (each request charged max(frame length, declared
// expansion) from admission until its reply is written), the toolchains it
// serves (surveyed from PATH in the background, or pinned by the operator),
// a scratch root under the OS temp dir claimed with an exclusive lock, and
// the counters of pace-node §10.6.
//
// Serve runs the request pipeline of pace-node §5.3 in its order, each refusal
// with its own counter: frame ceiling and budget from the frame header; parse;
// lease verification before any decompression (unless the node decided at
// startup that nothing else can reach this worker); stopping, cordoned, survey
// in flight; the envelope's declared expansion and the budget charge; a slot;
// the fingerprint mapped to a compiler from the worker's own configuration,
// never a path from the job; decompression; the argument allowlist (argvet); a
// private scratch directory and a sanitized source base name; the compiler
// spawned in its own process group with prefix maps so the object matches a
// local build, Progress frames while it runs, and a reply carrying the exit
// code, the object, both output streams, the correlation digest and the node's
// signature over them.
//
// The worker never stores to any cache and holds no cache credential:
// what it builds goes back to the client that asked, which stores it.
package worker
