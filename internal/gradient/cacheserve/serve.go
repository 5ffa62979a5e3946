package cacheserve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/buildfleet/buildfleet/internal/gradient/narstore"
	"github.com/buildfleet/buildfleet/internal/gradient/nixhash"
	"github.com/buildfleet/buildfleet/internal/gradient/store"
	"github.com/buildfleet/buildfleet/internal/gradient/wire"
)

// narKey names one pull stream: the worker routes NarPush by (job, path).
type narKey struct{ job, path string }

// serveItem is one path to stream; resume items carry the worker's offset and token.
type serveItem struct {
	key    narKey
	resume bool
	offset uint64
	token  string
}

// activeServe is a running stream, cancelled when the same stream is asked for again.
type activeServe struct {
	cancel context.CancelFunc
	done   chan struct{}
}

var chunkPool = sync.Pool{New: func() any { b := make([]byte, ChunkSize); return &b }}

func (s *Session) narRequest(m *wire.NarRequest) error {
	items := make([]serveItem, len(m.Paths))
	for i, p := range m.Paths {
		items[i] = serveItem{key: narKey{m.JobID, p}}
	}
	return s.enqueue(items)
}

func (s *Session) narResume(m *wire.NarRequestResume) error {
	return s.enqueue([]serveItem{{key: narKey{m.JobID, m.StorePath}, resume: true,
		offset: m.ReceivedBytes, token: m.StreamToken}})
}

// enqueue queues paths for the serve goroutines, starting up to MaxConcurrentServes; it
// never blocks the read loop. Paths past the queue bound are answered NarAbort.
func (s *Session) enqueue(items []serveItem) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return ErrClosed
	}
	n := min(len(items), maxQueuedServes-len(s.pending))
	s.pending = append(s.pending, items[:n]...)
	overflow := items[n:]
	starts := min(MaxConcurrentServes-s.running, len(s.pending))
	s.running += starts
	s.wg.Add(starts)
	s.mu.Unlock()
	for range starts {
		go s.serveLoop()
	}
	if len(overflow) > 0 {
		s.cfg.Counters.AbortOverload.Add(uint64(len(overflow)))
		s.spawn(func() {
			for _, it := range overflow {
				s.sendNar(&wire.NarAbort{JobID: it.key.job, StorePath: it.key.path, Reason: "too many NAR requests pending; retry"})
			}
		})
	}
	return nil
}

// serveLoop streams queued paths until the queue is empty or the session closes.
func (s *Session) serveLoop() {
	defer s.wg.Done()
	for {
		s.mu.Lock()
		if len(s.pending) == 0 || s.ctx.Err() != nil {
			s.running--
			s.mu.Unlock()
			return
		}
		it := s.pending[0]
		s.pending = s.pending[1:]
		if len(s.pending) == 0 {
			s.pending = nil
		}
		s.mu.Unlock()
		s.serveOne(it)
	}
}

// serveOne streams one path, first stopping an earlier stream of the same (job, path).
func (s *Session) serveOne(it serveItem) {
	ctx, cancel := context.WithCancel(s.ctx)
	defer cancel()
	a := &activeServe{cancel: cancel, done: make(chan struct{})}
	s.mu.Lock()
	prev := s.active[it.key]
	s.active[it.key] = a
	s.mu.Unlock()
	if prev != nil {
		prev.cancel()
		<-prev.done
	}
	defer func() {
		s.mu.Lock()
		if s.active[it.key] == a {
			delete(s.active, it.key)
		}
		s.mu.Unlock()
		close(a.done)
	}()
	s.stream(ctx, it)
}

// stream answers one path (gradient-protocol §7.4): NarUnavailable when it is not in the
// readable caches or its object is gone or of the wrong size (the row is demoted), NarAbort
// on a storage error, else the header and the chunks. Bytes that do not hash to the row's
// file_hash end in NarAbort instead of the final chunk, and the row is demoted: the worker's
// retry then finds the path uncached (NarUnavailable, so InputsUnavailable), and the server
// resets the build that produced it, whose upload replaces the object.
func (s *Session) stream(ctx context.Context, it serveItem) {
	c := s.cfg.Counters
	hash, err := store.StoreHash(it.key.path)
	if err != nil {
		s.unavailable(it, &c.UnavailInvalid, "not a store path")
		return
	}
	row, found, err := s.lookupOne(ctx, it.key.path)
	switch {
	case err != nil:
		s.abort(ctx, it, &c.AbortStore, "the cache state could not be read")
		return
	case !found:
		s.unavailable(it, &c.UnavailNotInCache, "not in this cache")
		return
	}
	f, size, err := s.cfg.NARs.Open(hash)
	switch {
	case errors.Is(err, narstore.ErrNotFound):
		s.demote(ctx, hash)
		s.unavailable(it, &c.UnavailMissing, "the cache has no stored object for this path")
		return
	case err != nil:
		s.abort(ctx, it, &c.AbortStore, "the stored object could not be opened")
		return
	}
	defer f.Close()
	want, err := nixhash.Parse(row.FileHash)
	if size != row.FileSize || err != nil {
		s.demote(ctx, hash)
		s.unavailable(it, &c.UnavailDamaged, "the stored object does not match its record")
		return
	}
	s.served(ctx, it, hash, s.push(ctx, it, f, size, want))
}

// served records how a stream ended: a whole one stamps the row; a corrupt object's row is
// demoted and the worker told with NarAbort in place of the final chunk.
func (s *Session) served(ctx context.Context, it serveItem, hash string, err error) {
	switch {
	case errors.Is(err, errCorrupt):
		s.cfg.Logger.Error("a stored NAR does not match its recorded file hash; demoting it", "path", it.key.path, "err", err)
		s.demote(ctx, hash)
		s.abort(ctx, it, &s.cfg.Counters.AbortCorrupt, "the stored object is corrupt; it was withdrawn from the cache")
	case err == nil:
		s.cfg.Counters.NarServes.Add(1)
		s.markFetched(ctx, hash)
	}
}

func (s *Session) lookupOne(ctx context.Context, p string) (store.CachedPath, bool, error) {
	readable, _ := s.cfg.Scope()
	ctx, cancel := context.WithTimeout(ctx, storeCallTimeout)
	defer cancel()
	rows, err := s.cfg.Paths.LookupCachedPaths(ctx, readable, []string{p})
	row, ok := rows[p]
	return row, ok, err
}

// streamToken is upstream's token for an object of size bytes.
func streamToken(size int64) string { return "len-" + strconv.FormatInt(size, 10) }

// errCorrupt: the stored bytes do not hash to the row's file_hash.
var errCorrupt = errors.New("stored object does not match its file hash")

// errStreamEnded: the stream stopped early and the worker was told (or was not waiting).
var errStreamEnded = errors.New("stream ended early")

// push sends the header and the chunks from the resume point while a streamHasher hashes
// every byte of the object (a resume hashes the skipped prefix first). The final chunk goes
// out only after the hash matched, so corrupt bytes never end in is_final: the worker never
// sees a complete stream of them. It returns nil when the whole stream went out, errCorrupt
// (nothing final sent, the caller answers) or errStreamEnded (already answered).
func (s *Session) push(ctx context.Context, it serveItem, r io.ReadSeeker, size int64, want nixhash.SHA256) error {
	token := streamToken(size)
	var off int64
	if it.resume && it.token == token && it.offset <= uint64(size) {
		off = int64(it.offset) // a stale token or an offset past the end restarts from 0
	}
	hdr := &wire.NarStreamHeader{JobID: it.key.job, StorePath: it.key.path, TotalBytes: uint64(size), StreamToken: token}
	if err := s.cfg.Send(ctx, hdr); err != nil {
		s.sendFailed(ctx, it, err)
		return errStreamEnded
	}
	h, err := newStreamHasher(r, off)
	if err != nil {
		s.abort(ctx, it, &s.cfg.Counters.AbortRead, "the stored object could not be read")
		return errStreamEnded
	}
	bufs := [2]*[]byte{chunkPool.Get().(*[]byte), chunkPool.Get().(*[]byte)}
	defer func() { h.stop(); chunkPool.Put(bufs[0]); chunkPool.Put(bufs[1]) }()
	for i := 0; ; i++ {
		n := min(int64(ChunkSize), size-off)
		chunk := (*bufs[i%2])[:n] // the hasher finished with this buffer when the last add began
		if _, err := io.ReadFull(r, chunk); err != nil {
			s.abort(ctx, it, &s.cfg.Counters.AbortRead, "the stored object could not be read")
			return errStreamEnded
		}
		final := off+n == size
		if final && !h.matches(chunk, want) {
			return fmt.Errorf("%s: %w", it.key.path, errCorrupt)
		}
		msg := &wire.NarPush{JobID: it.key.job, StorePath: it.key.path, Data: chunk, Offset: uint64(off), IsFinal: final}
		if err := s.cfg.Send(ctx, msg); err != nil {
			s.sendFailed(ctx, it, err)
			return errStreamEnded
		}
		s.cfg.Counters.NarServedBytes.Add(uint64(n))
		if off += n; final {
			return nil
		}
		h.add(chunk)
	}
}

// sendFailed: a stream superseded or closed ends quietly; a stalled one says so if it can.
func (s *Session) sendFailed(ctx context.Context, it serveItem, err error) {
	if ctx.Err() != nil {
		return
	}
	s.cfg.Logger.Warn("NAR stream stopped", "path", it.key.path, "err", err)
	s.abort(ctx, it, &s.cfg.Counters.AbortStalled, "the stream stalled")
}

func (s *Session) unavailable(it serveItem, c *atomic.Uint64, reason string) {
	c.Add(1)
	s.sendNar(&wire.NarUnavailable{JobID: it.key.job, StorePath: it.key.path, Reason: reason})
}

func (s *Session) abort(ctx context.Context, it serveItem, c *atomic.Uint64, reason string) {
	if ctx.Err() != nil { // superseded or closing: the worker is not waiting for this one
		return
	}
	c.Add(1)
	s.sendNar(&wire.NarAbort{JobID: it.key.job, StorePath: it.key.path, Reason: reason})
}

func (s *Session) sendNar(m wire.ServerMessage) {
	s.logSendErr("NAR reply", s.cfg.Send(s.ctx, m))
}

func (s *Session) markFetched(ctx context.Context, hash string) {
	ctx, cancel := context.WithTimeout(ctx, storeCallTimeout)
	defer cancel()
	if err := s.cfg.Paths.MarkFetched(ctx, hash); err != nil {
		s.cfg.Logger.Debug("stamping a fetch failed", "store_hash", hash, "err", err)
	}
}
