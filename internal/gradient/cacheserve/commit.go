package cacheserve

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path"

	"github.com/buildfleet/buildfleet/internal/gradient/narstore"
	"github.com/buildfleet/buildfleet/internal/gradient/nixhash"
	"github.com/buildfleet/buildfleet/internal/gradient/store"
	"github.com/buildfleet/buildfleet/internal/gradient/wire"
)

// uploadFinished ends a transfer: a failed one gets its outcome; a good one is committed
// on a session goroutine (verification reads the whole object), at once when its bytes are
// all staged, else when the last chunk arrives.
func (s *Session) uploadFinished(ctx context.Context, m *wire.UploadFinished) error {
	s.mu.Lock()
	u := s.uploads[m.RequestID]
	if u != nil && u.failed != nil {
		delete(s.uploads, u.id)
	}
	s.mu.Unlock()
	switch {
	case u == nil: // expired and forgotten, or never granted: a retry starts over
		return s.send(ctx, committed(m.RequestID, retry(&s.cfg.Counters.RetryUnknown, "no open upload has this request id")))
	case u.failed != nil:
		return s.send(ctx, committed(u.id, u.failed))
	}
	want, row, refusal := s.parseMetadata(u, m.Metadata)
	s.mu.Lock()
	failed := u.failed
	ready := failed == nil && refusal == nil && s.complete(u, want.FileSize)
	if failed != nil || refusal != nil || ready {
		delete(s.uploads, u.id)
	} else {
		u.finish = &finish{want: want, row: row}
	}
	s.mu.Unlock()
	switch {
	case failed != nil:
		return s.send(ctx, committed(u.id, failed))
	case refusal != nil:
		u.release(false)
		return s.send(ctx, committed(u.id, refusal))
	case ready:
		s.startCommit(u, &finish{want: want, row: row})
	}
	return nil
}

// startCommit commits on a session goroutine; a closing session just lets the upload go.
func (s *Session) startCommit(u *upload, f *finish) {
	if !s.spawn(func() { s.commit(u, f.want, f.row) }) {
		u.release(false)
	}
}

// parseMetadata reads the NAR metadata into what narstore checks and the row to record.
func (s *Session) parseMetadata(u *upload, md wire.UploadMetadata) (narstore.Expect, store.CachedPath, wire.UploadOutcome) {
	c := s.cfg.Counters
	meta, ok := md.(*wire.NarUploadMetadata)
	if !ok {
		return narstore.Expect{}, store.CachedPath{}, reject(&c.RejectedInvalid, "a NAR upload needs NAR metadata")
	}
	if meta.FileSize > math.MaxInt64 || meta.NarSize > uint64(s.cfg.MaxNarSize) {
		return narstore.Expect{}, store.CachedPath{}, reject(&c.RejectedTooLarge, "declared sizes over the cache's limit")
	}
	fileHash, err1 := nixhash.Parse(meta.FileHash)
	narHash, err2 := nixhash.Parse(meta.NarHash)
	if err := errors.Join(err1, err2); err != nil {
		return narstore.Expect{}, store.CachedPath{}, reject(&c.RejectedInvalid, fmt.Sprintf("bad hash: %v", err))
	}
	refs := make([]string, len(meta.References))
	for i, r := range meta.References {
		refs[i] = path.Base(r) // hash-name form, also when sent as a full path
		if _, err := store.StoreHash(refs[i]); err != nil {
			return narstore.Expect{}, store.CachedPath{}, reject(&c.RejectedInvalid, fmt.Sprintf("bad reference %.200q", r))
		}
	}
	want := narstore.Expect{FileSize: int64(meta.FileSize), FileHash: fileHash, NarSize: int64(meta.NarSize), NarHash: narHash}
	row := store.CachedPath{
		StorePath: u.storePath, StoreHash: u.storeHash,
		NarHash: narHash.String(), NarSize: want.NarSize, FileHash: fileHash.String(), FileSize: want.FileSize,
		References: refs, Deriver: meta.Deriver.Value, CA: meta.CA.Value,
	}
	return want, row, nil
}

// commit verifies and installs the bytes, then records the path (gradient-protocol §7.3:
// never the other way round), then frees the admission (so a retry the answer prompts is
// admitted) and answers.
func (s *Session) commit(u *upload, want narstore.Expect, row store.CachedPath) {
	outcome := s.install(u, want, row)
	u.lease.Release()
	s.logSendErr("UploadCommitted", s.send(s.ctx, committed(u.id, outcome)))
}

func (s *Session) install(u *upload, want narstore.Expect, row store.CachedPath) wire.UploadOutcome {
	c := s.cfg.Counters
	if !u.lease.Pin() {
		_ = u.staged.Close()
		return retry(&c.RetryLeaseExpired, "the upload lease expired")
	}
	if err := u.staged.Commit(u.storeHash, want); err != nil {
		return s.commitFailure(u, err)
	}
	_, pushable := s.cfg.Scope()
	// The bytes are good even if the session is closing: record them.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(s.ctx), storeCallTimeout)
	defer cancel()
	if err := s.cfg.Paths.PutCachedPath(ctx, row, pushable); err != nil {
		s.cfg.Logger.Error("upload: recording the path failed", "path", u.storePath, "err", err)
		return retry(&c.RetryRecord, "the cache could not record the path")
	}
	c.Committed.Add(1)
	c.CommittedBytes.Add(uint64(want.FileSize))
	return &wire.UploadOutcomeOk{}
}

// commitFailure maps a refused or failed commit to its outcome. A resumed upload whose
// compressed bytes do not match may have resumed stale bytes (the partial is gone now), so
// it is retried; other mismatches are the upload's fault.
func (s *Session) commitFailure(u *upload, err error) wire.UploadOutcome {
	c := s.cfg.Counters
	var ve *narstore.VerifyError
	if !errors.As(err, &ve) {
		s.cfg.Logger.Error("upload: commit failed", "path", u.storePath, "err", err)
		return retry(&c.RetryStorage, "the cache could not store the upload")
	}
	s.cfg.Logger.Warn("upload refused", "path", u.storePath, "check", ve.Check.String(), "detail", ve.Detail)
	reason := fmt.Sprintf("%s mismatch: %s", ve.Check, ve.Detail)
	switch ve.Check {
	case narstore.CheckFileSize, narstore.CheckFileHash:
		if u.resumed {
			return retry(&c.RetryResumeMismatch, "the resumed upload did not verify; upload it again: "+reason)
		}
		if ve.Check == narstore.CheckFileSize {
			return reject(&c.RejectedFileSize, reason)
		}
		return reject(&c.RejectedFileHash, reason)
	case narstore.CheckDecompress:
		return reject(&c.RejectedDecompress, reason)
	case narstore.CheckNarSize:
		return reject(&c.RejectedNarSize, reason)
	case narstore.CheckNarFormat:
		return reject(&c.RejectedNarFormat, reason)
	}
	return reject(&c.RejectedNarHash, reason)
}
