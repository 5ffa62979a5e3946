package cacheserve

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync/atomic"

	"github.com/buildfleet/buildfleet/internal/gradient/narstore"
	"github.com/buildfleet/buildfleet/internal/gradient/store"
	"github.com/buildfleet/buildfleet/internal/gradient/wire"
)

// upload is one granted passthrough upload of this session.
type upload struct {
	id        uint64
	storePath string
	storeHash string
	limit     int64 // most compressed bytes the declared size allows
	resumed   bool  // the grant resumed a partial: a mismatch may be the old bytes' fault
	staged    *narstore.Staged
	lease     *Lease

	// Guarded by Session.mu.
	failed   wire.UploadOutcome // set once the transfer failed: the answer to UploadFinished
	finish   *finish            // UploadFinished arrived before the last chunk
	sawFinal bool               // the chunk marked is_final was written
}

// finish is an UploadFinished waiting for its chunks: the control lane overtakes the bulk
// lane (gradient-protocol §1.5), so it often arrives before the last chunks.
type finish struct {
	want narstore.Expect
	row  store.CachedPath
}

// release ends the upload's hold on storage and admission; abort also deletes the partial.
func (u *upload) release(abort bool) {
	if abort {
		_ = u.staged.Abort()
	} else {
		_ = u.staged.Close()
	}
	u.lease.Release()
}

// compressBound is the most bytes zstd may produce from n (its worst case adds about 3
// bytes per 128 KiB block plus a header; this is generous).
func compressBound(n uint64) int64 {
	if n > math.MaxInt64/2 {
		return math.MaxInt64
	}
	return int64(n + n>>7 + 64<<10)
}

// uploadRequest answers UploadRequest (gradient-protocol §7.3) with a grant or, before any
// grant, with UploadCommitted Retry/Rejected.
func (s *Session) uploadRequest(ctx context.Context, m *wire.UploadRequest) error {
	s.cfg.Counters.UploadRequests.Add(1)
	nar, ok := m.Object.(*wire.UploadObjectNar)
	if !ok { // eval-cache blobs are not kept in v1 (gradient-protocol §7.5)
		s.cfg.Counters.SkippedEvalCache.Add(1)
		return s.send(ctx, &wire.UploadGrant{RequestID: m.RequestID, Target: &wire.GrantTargetSkip{}})
	}
	return s.send(ctx, s.openUpload(ctx, m, nar.StorePath))
}

// openUpload decides an upload request: the first refusal found, else a grant.
func (s *Session) openUpload(ctx context.Context, m *wire.UploadRequest, storePath string) wire.ServerMessage {
	hash, refusal := s.checkRequest(m, storePath)
	if refusal != nil {
		return refusal
	}
	_, pushable := s.cfg.Scope()
	stored, err := s.alreadyStored(ctx, storePath, hash, pushable)
	switch {
	case err != nil:
		s.cfg.Logger.Warn("upload: reading the cache state failed", "path", storePath, "err", err)
		return committed(m.RequestID, retry(&s.cfg.Counters.RetryStorage, "the cache state could not be read"))
	case stored:
		s.cfg.Counters.SkippedStored.Add(1)
		return &wire.UploadGrant{RequestID: m.RequestID, Target: &wire.GrantTargetSkip{}}
	}
	u := &upload{id: m.RequestID, storePath: storePath, storeHash: hash, limit: compressBound(m.Size)}
	lease, err := s.cfg.Admission.Acquire(hash, m.Size, func() { s.expire(u) })
	switch {
	case errors.Is(err, ErrInProgress):
		s.cfg.Counters.SkippedInProgress.Add(1)
		return &wire.UploadGrant{RequestID: m.RequestID, Target: &wire.GrantTargetSkip{}}
	case err != nil:
		return committed(m.RequestID, retry(&s.cfg.Counters.RetryAdmission, err.Error()))
	}
	u.lease = lease
	return s.stage(u)
}

// checkRequest runs the checks that need neither store nor disk.
func (s *Session) checkRequest(m *wire.UploadRequest, storePath string) (string, wire.ServerMessage) {
	c := s.cfg.Counters
	hash, err := store.StoreHash(storePath)
	if err != nil {
		return "", committed(m.RequestID, reject(&c.RejectedInvalid, "not a store path"))
	}
	if m.Size > uint64(s.cfg.MaxNarSize) || !s.cfg.Admission.Fits(m.Size) {
		return "", committed(m.RequestID, reject(&c.RejectedTooLarge, fmt.Sprintf("%d bytes is over the cache's limit", m.Size)))
	}
	if _, pushable := s.cfg.Scope(); len(pushable) == 0 {
		return "", committed(m.RequestID, reject(&c.RejectedNoCache, "this session may push to no cache"))
	}
	s.mu.Lock()
	_, dup := s.uploads[m.RequestID]
	open := len(s.uploads)
	s.mu.Unlock()
	switch {
	case dup:
		return "", committed(m.RequestID, reject(&c.RejectedInvalid, "request id already in use"))
	case open >= maxOpenUploads:
		return "", committed(m.RequestID, retry(&c.RetryTooManyOpen, "too many open uploads on this session"))
	}
	return hash, nil
}

// alreadyStored: the path is visible in a pushable cache and its object is stored whole.
func (s *Session) alreadyStored(ctx context.Context, storePath, hash string, pushable []string) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, storeCallTimeout)
	defer cancel()
	rows, err := s.cfg.Paths.LookupCachedPaths(ctx, pushable, []string{storePath})
	if err != nil {
		return false, err
	}
	row, ok := rows[storePath]
	if !ok {
		return false, nil
	}
	has, size, err := s.cfg.NARs.Has(hash)
	return has && size == row.FileSize, err
}

// stage opens the admitted upload's partial, resuming what this worker staged before, and
// registers it.
func (s *Session) stage(u *upload) wire.ServerMessage {
	st, err := s.cfg.NARs.Stage(s.cfg.WorkerID + "/" + u.storeHash)
	if err == nil && st.Offset() > u.limit { // left by an upload of another declared size
		_ = st.Abort()
		st, err = s.cfg.NARs.Stage(s.cfg.WorkerID + "/" + u.storeHash)
	}
	if err != nil {
		u.lease.Release()
		if errors.Is(err, narstore.ErrBusy) {
			return committed(u.id, retry(&s.cfg.Counters.RetryBusy, "an earlier upload of this path is still open"))
		}
		s.cfg.Logger.Error("upload: staging failed", "path", u.storePath, "err", err)
		return committed(u.id, retry(&s.cfg.Counters.RetryStorage, "the cache could not stage the upload"))
	}
	u.staged = st
	offset := st.Offset()
	u.resumed = offset > 0
	s.mu.Lock()
	closed := s.closed
	if !closed {
		s.uploads[u.id] = u
	}
	s.mu.Unlock()
	if closed {
		u.release(false)
		return committed(u.id, retry(&s.cfg.Counters.RetryStorage, "session closing"))
	}
	s.cfg.Counters.UploadsGranted.Add(1)
	if u.resumed {
		s.cfg.Counters.UploadsResumed.Add(1)
	}
	return &wire.UploadGrant{RequestID: u.id, Target: &wire.GrantTargetPassthrough{ResumeOffset: uint64(offset)}}
}

func committed(id uint64, o wire.UploadOutcome) *wire.UploadCommitted {
	return &wire.UploadCommitted{RequestID: id, Outcome: o}
}

// retry and reject count the outcome they make.
func retry(c *atomic.Uint64, reason string) wire.UploadOutcome {
	c.Add(1)
	return &wire.UploadOutcomeRetry{Reason: reason}
}

func reject(c *atomic.Uint64, reason string) wire.UploadOutcome {
	c.Add(1)
	return &wire.UploadOutcomeRejected{Reason: reason}
}
