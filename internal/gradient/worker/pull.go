package worker

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/nixexec"
	"github.com/buildfleet/buildfleet/internal/gradient/upstream"
	"github.com/buildfleet/buildfleet/internal/gradient/wire"
)

// pullAttempts is the first request of a NAR plus its retries after NarAbort or a broken
// stream.
const pullAttempts = 4

var (
	errNarUnavailable = errors.New("NAR unavailable")
	errNarAborted     = errors.New("NAR stream aborted")
	errNarCorrupt     = errors.New("NAR stream corrupt")
)

// narStream receives one pulled NAR into a file. apply runs on the session goroutine; the
// job goroutine waits on done.
type narStream struct {
	path       string
	file       *os.File
	expectSize uint64 // compressed size from CacheStatus; 0 = unknown
	expectHash []byte // SHA-256 of the compressed bytes from CacheStatus; nil = unknown

	mu       sync.Mutex
	hash     hash.Hash
	received uint64
	total    uint64
	headered bool
	token    string
	finished bool
	done     chan error
}

func (st *narStream) apply(m wire.ServerMessage) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.finished {
		return
	}
	switch m := m.(type) {
	case *wire.NarStreamHeader:
		st.total, st.token, st.headered = m.TotalBytes, m.StreamToken, true
		if st.expectSize != 0 && m.TotalBytes != st.expectSize {
			st.finish(fmt.Errorf("%w: stream of %d bytes, the cache listed %d", errNarCorrupt, m.TotalBytes, st.expectSize))
		}
	case *wire.NarPush:
		st.push(m)
	case *wire.NarUnavailable:
		st.finish(fmt.Errorf("%w: %s", errNarUnavailable, m.Reason))
	case *wire.NarAbort:
		st.finish(fmt.Errorf("%w: %s", errNarAborted, m.Reason))
	}
}

func (st *narStream) push(m *wire.NarPush) {
	if !st.headered {
		st.finish(fmt.Errorf("%w: chunk before the stream header", errNarCorrupt))
		return
	}
	if m.Offset == 0 && st.received > 0 { // the server restarted the stream from 0
		if err := st.reset(); err != nil {
			st.finish(err)
			return
		}
	}
	if m.Offset != st.received || st.received+uint64(len(m.Data)) > st.total {
		st.finish(fmt.Errorf("%w: chunk at %d (+%d) after %d of %d bytes", errNarCorrupt, m.Offset, len(m.Data), st.received, st.total))
		return
	}
	if _, err := st.file.Write(m.Data); err != nil {
		st.finish(fmt.Errorf("writing %s: %w", st.file.Name(), err))
		return
	}
	st.hash.Write(m.Data)
	st.received += uint64(len(m.Data))
	if !m.IsFinal {
		return
	}
	switch {
	case st.received != st.total:
		st.finish(fmt.Errorf("%w: final chunk at %d of %d bytes", errNarCorrupt, st.received, st.total))
	case st.expectHash != nil && !bytes.Equal(st.hash.Sum(nil), st.expectHash):
		st.finish(fmt.Errorf("%w: file hash %s, the cache listed %s", errNarCorrupt,
			nixexec.SHA256Text(st.hash.Sum(nil)), nixexec.SHA256Text(st.expectHash)))
	default:
		st.finish(nil)
	}
}

func (st *narStream) reset() error {
	if _, err := st.file.Seek(0, io.SeekStart); err != nil {
		return err
	}
	if err := st.file.Truncate(0); err != nil {
		return err
	}
	st.hash, st.received = sha256.New(), 0
	return nil
}

func (st *narStream) finish(err error) {
	st.finished = true
	st.done <- err
}

// rearm prepares the stream for another request after a failure; resume tells whether the
// bytes received so far can be kept (NarRequestResume) and from where.
func (st *narStream) rearm() (resume bool, from uint64, token string) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.finished, st.done = false, make(chan error, 1)
	if st.received > 0 && st.token != "" && st.received < st.total {
		return true, st.received, st.token
	}
	_ = st.reset()
	st.headered = false
	return false, 0, ""
}

func (st *narStream) wait() <-chan error {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.done
}

// pull fetches the NARs of the given cached paths into the job directory
// (gradient-protocol §7.4) and returns the files by path. Paths the server has no object
// for are returned as missing.
func (r *run) pull(ctx context.Context, infos map[string]wire.CachedPath) (files map[string]string, missing []string, err error) {
	paths := slices.Sorted(maps.Keys(infos))
	streams := make(map[string]*narStream, len(paths))
	defer func() {
		for p, st := range streams {
			r.s.routes.removeNar(narKey{r.j.id, p})
			st.file.Close()
		}
	}()
	for _, p := range paths {
		st, err := r.newStream(p, infos[p])
		if err != nil {
			return nil, nil, failed(wire.BuildFailureKindTransient, err)
		}
		streams[p] = st
		r.s.routes.addNar(narKey{r.j.id, p}, st)
	}
	for chunk := range slices.Chunk(paths, cacheQueryMaxPaths) {
		if err := r.s.send(&wire.NarRequest{JobID: r.j.id, Paths: chunk}); err != nil {
			return nil, nil, err
		}
	}
	files = make(map[string]string, len(paths))
	for _, p := range paths {
		err := r.awaitStream(ctx, streams[p])
		switch {
		case errors.Is(err, errNarUnavailable):
			missing = append(missing, p)
		case err != nil:
			return nil, nil, err
		default:
			files[p] = streams[p].file.Name()
		}
	}
	return files, missing, nil
}

func (r *run) newStream(p string, info wire.CachedPath) (*narStream, error) {
	f, err := os.Create(filepath.Join(r.dir, "pull-"+filepath.Base(p)+".nar.zst"))
	if err != nil {
		return nil, err
	}
	st := &narStream{path: p, file: f, hash: sha256.New(), done: make(chan error, 1)}
	if size, ok := info.FileSize.Get(); ok {
		st.expectSize = size
	}
	if h, ok := info.FileHash.Get(); ok {
		if sum, err := nixexec.ParseSHA256(h); err == nil {
			st.expectHash = sum
		}
	}
	return st, nil
}

// awaitStream waits for one stream, re-requesting it (resuming when possible) after an
// abort or a broken stream.
func (r *run) awaitStream(ctx context.Context, st *narStream) error {
	for attempt := 1; ; attempt++ {
		timer := time.NewTimer(r.s.w.cfg.TransferTimeout)
		var err error
		select {
		case err = <-st.wait():
		case <-timer.C:
			err = fmt.Errorf("%w: no complete stream within %s", errNarAborted, r.s.w.cfg.TransferTimeout)
		case <-ctx.Done():
			timer.Stop()
			return context.Cause(ctx)
		}
		timer.Stop()
		if err == nil || errors.Is(err, errNarUnavailable) {
			return err
		}
		if attempt == pullAttempts {
			return failed(wire.BuildFailureKindTransient, fmt.Errorf("pulling %s: %w", st.path, err))
		}
		r.s.log.Warn("worker: NAR pull failed, retrying", "job", r.j.id, "path", st.path, "err", err)
		var msg wire.ClientMessage = &wire.NarRequest{JobID: r.j.id, Paths: []string{st.path}}
		if resume, from, token := st.rearm(); resume {
			msg = &wire.NarRequestResume{JobID: r.j.id, StorePath: st.path, ReceivedBytes: from, StreamToken: token}
		}
		if err := r.s.send(msg); err != nil {
			return err
		}
	}
}

// importPulled imports pulled NARs in dependency order, checking each NAR's hash.
func (r *run) importPulled(ctx context.Context, infos map[string]wire.CachedPath, files map[string]string) error {
	items := make([]nixexec.ImportItem, 0, len(files))
	for p, file := range files {
		info := infos[p]
		refs, _ := info.References.Get()
		deriver, _ := info.Deriver.Get()
		item := nixexec.ImportItem{Path: p, References: refs, Deriver: deriver,
			Open: func() (io.ReadCloser, error) { return os.Open(file) }}
		if u, ok := info.URL.Get(); ok { // an upstream's NAR (gradient-server §14)
			item.Compression = upstream.CompressionOf(u)
		}
		if size, ok := info.NarSize.Get(); ok {
			item.NarSize = int64(size)
		}
		if h, ok := info.NarHash.Get(); ok {
			sum, err := nixexec.ParseSHA256(h)
			if err != nil {
				return failed(wire.BuildFailureKindTransient, fmt.Errorf("%s: nar hash: %w", p, err))
			}
			item.NarHash = sum
		}
		items = append(items, item)
	}
	if err := r.s.w.nix.Import(ctx, items); err != nil {
		return failed(wire.BuildFailureKindTransient, err)
	}
	return nil
}
