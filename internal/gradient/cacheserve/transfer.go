package cacheserve

import (
	"errors"
	"fmt"

	"github.com/buildfleet/buildfleet/internal/gradient/narstore"
	"github.com/buildfleet/buildfleet/internal/gradient/wire"
)

// uploadChunk writes a chunk before returning: its bytes alias the frame.
func (s *Session) uploadChunk(m *wire.UploadChunk) error {
	s.mu.Lock()
	u := s.uploads[m.RequestID]
	dead := u == nil || u.failed != nil
	s.mu.Unlock()
	if dead { // canceled, failed, expired or never granted
		s.cfg.Counters.ChunksDropped.Add(1)
		return nil
	}
	c := s.cfg.Counters
	if m.Offset > uint64(u.limit) || int64(m.Offset)+int64(len(m.Data)) > u.limit {
		s.fail(u, reject(&c.RejectedTooLarge, "more bytes than the declared size allows"), true)
		return nil
	}
	err := u.staged.Write(int64(m.Offset), m.Data)
	var oe *narstore.OffsetError
	switch {
	case errors.As(err, &oe):
		s.fail(u, retry(&c.RetryOffset, fmt.Sprintf("chunk at offset %d, the staged bytes end at %d", oe.Got, oe.Want)), false)
	case errors.Is(err, narstore.ErrFinished): // the lease expired under us
		c.ChunksDropped.Add(1)
	case err != nil:
		s.cfg.Logger.Error("upload: writing a chunk failed", "path", u.storePath, "err", err)
		s.fail(u, retry(&c.RetryStorage, "the cache could not write the upload"), false)
	default:
		u.lease.Touch()
		c.UploadBytes.Add(uint64(len(m.Data)))
		s.chunkWritten(u, m.IsFinal)
	}
	return nil
}

// chunkWritten starts the commit of an upload whose UploadFinished came first, once its
// bytes are all there.
func (s *Session) chunkWritten(u *upload, final bool) {
	s.mu.Lock()
	u.sawFinal = u.sawFinal || final
	f := u.finish
	ready := f != nil && s.complete(u, f.want.FileSize)
	if ready {
		delete(s.uploads, u.id)
	}
	s.mu.Unlock()
	if ready {
		s.startCommit(u, f)
	}
}

// complete: the final chunk came or the declared length is staged; s.mu is held and u is
// registered.
func (s *Session) complete(u *upload, fileSize int64) bool {
	return s.uploads[u.id] == u && (u.sawFinal || u.staged.Offset() >= fileSize)
}

// fail ends a transfer early and releases its storage and admission at once. The outcome
// answers the UploadFinished: the one to come, or the one already waiting.
func (s *Session) fail(u *upload, outcome wire.UploadOutcome, abort bool) {
	s.mu.Lock()
	first := u.failed == nil
	if first {
		u.failed = outcome
	}
	answerNow := first && u.finish != nil && s.uploads[u.id] == u
	if answerNow {
		delete(s.uploads, u.id)
	}
	s.mu.Unlock()
	if first {
		u.release(abort)
	}
	if answerNow { // off the caller's goroutine: an expiry runs on another session's
		s.spawn(func() { s.logSendErr("UploadCommitted", s.send(s.ctx, committed(u.id, outcome))) })
	}
}

// expire is the lease's expiry: the upload lost its slot; its partial stays for a resume.
func (s *Session) expire(u *upload) {
	s.cfg.Counters.LeasesExpired.Add(1)
	s.mu.Lock()
	registered := s.uploads[u.id] == u
	s.mu.Unlock()
	if registered {
		s.fail(u, retry(&s.cfg.Counters.RetryLeaseExpired, "the upload lease expired"), false)
	}
}

// uploadCancel abandons an upload; the partial stays for the retry to resume.
func (s *Session) uploadCancel(m *wire.UploadCancel) error {
	s.mu.Lock()
	u := s.uploads[m.RequestID]
	delete(s.uploads, m.RequestID)
	s.mu.Unlock()
	if u != nil {
		s.cfg.Counters.Canceled.Add(1)
		u.release(false)
	}
	return nil
}
