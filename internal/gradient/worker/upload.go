package worker

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/nixexec"
	"github.com/buildfleet/buildfleet/internal/gradient/wire"
)

// Upload limits of gradient-protocol §1.3 and gradient-protocol §7.3.
const (
	BulkChunkSize  = 512 << 10
	maxUploadSlots = 16
	// uploadAttempts is the first try plus three retries of an UploadCommitted Retry.
	uploadAttempts = 4
	// uploadReplyTimeout bounds the wait for a grant or a commit (the server's lease on a
	// silent upload is 300 s).
	uploadReplyTimeout = 5 * time.Minute
)

var errUploadRejected = errors.New("upload rejected")

// push uploads whatever of paths (valid store paths) the cache lacks: one CacheQuery Push,
// then the upload flow for each uncached path, references first. It returns how many paths
// and compressed bytes went out.
func (r *run) push(ctx context.Context, paths []string) (int, uint64, error) {
	if len(paths) == 0 {
		return 0, 0, nil
	}
	infos, err := r.s.w.nix.PathInfo(ctx, paths)
	if err != nil {
		return 0, 0, failed(wire.BuildFailureKindTransient, fmt.Errorf("reading path info: %w", err))
	}
	if infos, err = topological(infos); err != nil {
		return 0, 0, failed(wire.BuildFailureKindTransient, err)
	}
	sizes := make(map[string]uint64, len(infos))
	for _, in := range infos {
		sizes[in.Path] = in.NarSize
	}
	status, err := r.cacheQuery(ctx, paths, wire.QueryModePush, sizes)
	if err != nil {
		return 0, 0, err
	}
	n, total := 0, uint64(0)
	for _, in := range infos {
		if status[in.Path].Cached {
			continue
		}
		sent, err := r.upload(ctx, in)
		if err != nil {
			return n, total, failed(wire.BuildFailureKindTransient, fmt.Errorf("uploading %s: %w", in.Path, err))
		}
		n, total = n+1, total+sent
	}
	return n, total, nil
}

// upload runs the v30 upload flow for one path (gradient-protocol §7.3), retrying a Retry
// outcome.
func (r *run) upload(ctx context.Context, info nixexec.PathInfo) (uint64, error) {
	select {
	case r.s.w.uploads <- struct{}{}:
	case <-ctx.Done():
		return 0, context.Cause(ctx)
	}
	defer func() { <-r.s.w.uploads }()
	delay := r.s.w.cfg.RetryDelay
	for attempt := 1; ; attempt++ {
		sent, retry, err := r.uploadOnce(ctx, info)
		if err != nil || retry == "" {
			return sent, err
		}
		if attempt == uploadAttempts {
			return 0, fmt.Errorf("the cache asked to retry %d times: %s", attempt, retry)
		}
		if err := sleep(ctx, delay); err != nil {
			return 0, err
		}
		delay *= 2
	}
}

// uploadOnce is one UploadRequest; retry is set (to the server's reason) when the outcome
// was Retry.
func (r *run) uploadOnce(ctx context.Context, info nixexec.PathInfo) (sent uint64, retry string, err error) {
	id := r.s.w.requestID.Add(1)
	replies, done := r.s.routes.awaitUpload(id)
	defer done()
	req := &wire.UploadRequest{JobID: r.j.id, RequestID: id, Object: &wire.UploadObjectNar{StorePath: info.Path}, Size: info.NarSize}
	if err := r.s.send(req); err != nil {
		return 0, "", err
	}
	first, err := r.awaitReply(ctx, replies)
	if err != nil {
		r.cancelUpload(id)
		return 0, "", err
	}
	switch m := first.(type) {
	case *wire.UploadCommitted: // answered before any grant
		retry, err := outcome(m)
		return 0, retry, err
	case *wire.UploadGrant:
		return r.granted(ctx, id, m, info, replies)
	}
	return 0, "", fmt.Errorf("unexpected %T", first)
}

func (r *run) granted(ctx context.Context, id uint64, g *wire.UploadGrant, info nixexec.PathInfo, replies <-chan wire.ServerMessage) (uint64, string, error) {
	var offset uint64
	switch t := g.Target.(type) {
	case *wire.GrantTargetSkip:
		return 0, "", nil
	case *wire.GrantTargetPassthrough:
		offset = t.ResumeOffset
	default:
		r.cancelUpload(id)
		return 0, "", fmt.Errorf("grant %T is not supported by this worker", g.Target)
	}
	stats, err := r.streamNAR(ctx, id, info, offset)
	if err != nil {
		r.cancelUpload(id)
		return 0, "", err
	}
	if err := r.s.send(&wire.UploadFinished{RequestID: id, Metadata: uploadMetadata(stats, info)}); err != nil {
		return 0, "", err
	}
	reply, err := r.awaitReply(ctx, replies)
	if err != nil {
		r.cancelUpload(id)
		return 0, "", err
	}
	committed, ok := reply.(*wire.UploadCommitted)
	if !ok {
		return 0, "", fmt.Errorf("expected UploadCommitted, got %T", reply)
	}
	retry, err := outcome(committed)
	return stats.FileSize, retry, err
}

// streamNAR dumps the path, compresses it and sends it in 512 KiB UploadChunks from offset.
func (r *run) streamNAR(ctx context.Context, id uint64, info nixexec.PathInfo, offset uint64) (nixexec.NARStats, error) {
	cw := &chunkWriter{send: r.s.send, id: id, skip: offset, buf: make([]byte, 0, BulkChunkSize)}
	stats, err := r.s.w.nix.DumpNAR(ctx, info.Path, cw)
	if err == nil {
		err = cw.finish()
	}
	if err != nil {
		return stats, err
	}
	if got := nixexec.SHA256Text(stats.NarHash); got != info.NarHash || stats.NarSize != info.NarSize {
		return stats, fmt.Errorf("the dumped NAR (%s, %d bytes) differs from the store's record (%s, %d bytes)",
			got, stats.NarSize, info.NarHash, info.NarSize)
	}
	return stats, nil
}

// uploadMetadata is UploadFinished's narinfo (gradient-protocol §7.3): hashes as
// sha256:<nix32>, references in hash-name form.
func uploadMetadata(stats nixexec.NARStats, info nixexec.PathInfo) *wire.NarUploadMetadata {
	meta := &wire.NarUploadMetadata{
		FileHash: nixexec.SHA256Text(stats.FileHash), FileSize: stats.FileSize,
		NarSize: stats.NarSize, NarHash: nixexec.SHA256Text(stats.NarHash),
		References: info.ShortReferences(),
	}
	if info.Deriver != "" {
		meta.Deriver = wire.Some(info.Deriver)
	}
	if info.CA != "" {
		meta.CA = wire.Some(info.CA)
	}
	return meta
}

func outcome(m *wire.UploadCommitted) (retry string, err error) {
	switch o := m.Outcome.(type) {
	case *wire.UploadOutcomeOk:
		return "", nil
	case *wire.UploadOutcomeRetry:
		return "retry: " + o.Reason, nil
	case *wire.UploadOutcomeRejected:
		return "", fmt.Errorf("%w: %s", errUploadRejected, o.Reason)
	}
	return "", fmt.Errorf("unknown upload outcome %T", m.Outcome)
}

func (r *run) awaitReply(ctx context.Context, replies <-chan wire.ServerMessage) (wire.ServerMessage, error) {
	t := time.NewTimer(uploadReplyTimeout)
	defer t.Stop()
	select {
	case m := <-replies:
		return m, nil
	case <-t.C:
		return nil, errors.New("no answer from the cache")
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
}

// cancelUpload tells the server an upload is abandoned (best effort).
func (r *run) cancelUpload(id uint64) { _ = r.s.send(&wire.UploadCancel{RequestID: id}) }

// chunkWriter turns the compressed stream into UploadChunks of BulkChunkSize: it holds one
// chunk back so that the last one can carry is_final, and skips the first skip bytes (a
// resumed upload). Send copies the data into its frame, so the buffer is reused.
type chunkWriter struct {
	send   func(wire.ClientMessage) error
	id     uint64
	skip   uint64
	offset uint64 // stream offset of buf[0]
	buf    []byte
}

func (c *chunkWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		if c.skip > 0 {
			k := min(uint64(len(p)), c.skip)
			c.skip -= k
			c.offset += k
			p = p[k:]
			continue
		}
		if len(c.buf) == BulkChunkSize {
			if err := c.flush(false); err != nil {
				return 0, err
			}
		}
		k := min(len(p), BulkChunkSize-len(c.buf))
		c.buf = append(c.buf, p[:k]...)
		p = p[k:]
	}
	return n, nil
}

func (c *chunkWriter) flush(final bool) error {
	err := c.send(&wire.UploadChunk{RequestID: c.id, Data: c.buf, Offset: c.offset, IsFinal: final})
	c.offset += uint64(len(c.buf))
	c.buf = c.buf[:0]
	return err
}

// finish sends the held-back chunk as the final one.
func (c *chunkWriter) finish() error { return c.flush(true) }
