// Package cacheserve is the server side of cache traffic on one session
// (gradient-protocol §7): the CacheQuery answers, the v30 upload flow into local NAR
// storage, and NAR pulls. A worker session on /proto hands it every cache message, scoped
// to the caches of the projects the worker authenticated for; a read-only
// /cache/{cache}/proto session scopes it to one cache and may only query and pull.
//
// The session owner reads frames and calls Handle for each message; Handle returns at once
// for the slow work: queries (answered within 45 s, CacheError on a store failure or a
// timeout, never a false cached:false), upload commits (verify, then record) and NAR
// streams (at most 8 per session) run on goroutines that reply through Config.Send. Upload
// chunks are the exception: their bytes alias the frame, so they are written before Handle
// returns.
//
// Two rules keep the cache honest. A path is recorded (PutCachedPath) only after narstore
// verified and installed its bytes, so no row claims bytes that are not stored. And a row
// whose object is gone is demoted where it is found (a query or a pull), so the worker that
// produced the path uploads it again. A pull verifies as it streams: every byte served is
// hashed (a resume hashes the prefix it skips), and the final chunk goes out only when the
// object hashes to the row's file_hash; a corrupt object ends in NarAbort instead and its
// row is demoted, so bad bytes never reach a worker as a complete stream.
//
// Admission is server-wide and shared by every session: 8 large uploads (declared size over
// 1 MiB), 128 small ones, an 8 GiB budget charged by declared size, one upload per store
// path at a time (a second one is granted Skip, gradient-protocol §7.3), and a lease that
// expires after 300 s without progress. Counters, also shared, count every answer and
// refusal under the names Samples lists.
package cacheserve
