// Package worker is gradient's worker (gradient-protocol §4, gradient-server §6 and
// gradient-server §8): its persistent identity and peers file, the connection to the server
// with reconnect backoff, and the job loop that runs over any established worker session —
// flake jobs (fetch, evaluate, upload .drv files and sources, report derivations in batches)
// and build jobs (prefetch inputs from the cache, build with timeouts, stream the log, upload
// the outputs) — executing with the nix command line through package nixexec.
//
// The job loop (Serve) does not care who dialed: it takes an established
// *wsconn.WorkerConn and the running handshake role, steps that role for the session's own
// messages (reauth) and handles everything else itself. Run is the worker-dialed mode: it
// dials the server, runs the peer handshake, serves, and reconnects with backoff. Listen is
// the discoverable mode (Config.Listen): the server dials the worker, the worker checks the
// server's tokens against its accepted server tokens file (ServerTokens), and the session
// runs the same Serve, one at a time.
//
// One goroutine owns a session: it reads messages (through a reader goroutine), steps the
// role, starts and aborts jobs and routes replies (CacheStatus, UploadGrant, NarPush, …) to
// the job goroutines waiting for them. Job goroutines send their reports on the shared
// writer; the session never waits for a job except when the session ends.
package worker
