// Package narstore keeps the server's NAR objects on disk (gradient-protocol §7.3,
// gradient-protocol §7.4): the zstd-compressed NAR bytes exactly as the worker sent them
// (the server never recompresses), one file per store path at
// <dir>/nar/<store-hash>.nar.zst.
//
// Uploads are staged under <dir>/nar-partial/, one append-only file per key, so a broken
// transfer resumes from the staged length (Staged.Offset, the grant's resume_offset). A
// partial survives a restart of the server; SweepPartials removes the ones that made no
// progress for a lease.
//
// Commit is the only way into nar/, and it verifies before it moves anything: first the
// length and SHA-256 of the compressed bytes (hashed while they were written), only then the
// decompression, streamed with a capped decoder window and refused the moment its output
// passes the declared NAR size (a decompression bomb costs at most NarSize+1 bytes of
// hashing, never memory or disk), then the NAR's size, magic and SHA-256. A verified file is
// fsynced and renamed into place and the directory fsynced, so an object either exists
// whole or not at all. Any failed check deletes the partial and returns a *VerifyError
// naming the check.
//
// Callers record cache metadata only after Commit returns nil: no row ever claims bytes
// that are not stored.
package narstore
