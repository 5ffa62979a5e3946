package workertest

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"path"
	"slices"
	"strconv"
	"sync"

	"github.com/klauspost/compress/zstd"

	"github.com/buildfleet/buildfleet/internal/gradient/nixexec"
	"github.com/buildfleet/buildfleet/internal/gradient/wire"
)

// Entry is one stored NAR with its narinfo fields.
type Entry struct {
	StorePath  string
	Compressed []byte // the zstd stream as uploaded
	FileHash   string // sha256:<nix32> of Compressed
	NarHash    string // sha256:<nix32> of the NAR
	NarSize    uint64
	References []string // hash-name form, as uploaded
	Deriver    string
	CA         string
}

// Cache is the fake server's NAR store, in memory.
type Cache struct {
	mu      sync.Mutex
	entries map[string]*Entry
}

// NewCache returns an empty cache.
func NewCache() *Cache { return &Cache{entries: map[string]*Entry{}} }

// Get returns a stored path.
func (c *Cache) Get(storePath string) (*Entry, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[storePath]
	return e, ok
}

// Put stores an entry.
func (c *Cache) Put(e *Entry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.entries[e.StorePath] = e
}

// Paths lists the stored paths, sorted.
func (c *Cache) Paths() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]string, 0, len(c.entries))
	for p := range c.entries {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

func (ss *Session) cacheQuery(q *wire.CacheQuery) {
	if ss.srv.takeQueryFailure() {
		ss.send(&wire.CacheError{QueryID: q.QueryID, Message: "injected cache failure"})
		return
	}
	status := &wire.CacheStatus{QueryID: q.QueryID}
	for _, p := range q.Paths {
		e, ok := ss.srv.Cache.Get(p)
		up, upstream := ss.srv.upstreamOf(p)
		switch {
		case !ok && upstream && q.External:
			status.Cached = append(status.Cached, up)
		case ok && q.Mode == wire.QueryModePull:
			status.Cached = append(status.Cached, pulled(e))
		case ok || q.Mode != wire.QueryModeNormal:
			status.Cached = append(status.Cached, wire.CachedPath{Path: p, Cached: ok})
		}
	}
	ss.send(status)
}

// pulled is a cached path's Pull answer: references as full store paths
// (gradient-protocol §7.2).
func pulled(e *Entry) wire.CachedPath {
	refs := make([]string, len(e.References))
	for i, r := range e.References {
		refs[i] = nixexec.FullStorePath(r)
	}
	c := wire.CachedPath{Path: e.StorePath, Cached: true,
		FileSize: wire.Some(uint64(len(e.Compressed))), NarSize: wire.Some(e.NarSize),
		NarHash: wire.Some(e.NarHash), FileHash: wire.Some(e.FileHash), References: wire.Some(refs)}
	if e.Deriver != "" {
		c.Deriver = wire.Some(e.Deriver)
	}
	if e.CA != "" {
		c.CA = wire.Some(e.CA)
	}
	return c
}

// upload is one passthrough upload in progress. UploadFinished rides the control lane and
// the chunks the bulk lane, so the metadata may arrive before the final chunk: the check
// waits for both.
type upload struct {
	path     string
	buf      []byte
	final    bool
	finished *wire.UploadFinished
}

func (ss *Session) uploadMessage(m wire.ClientMessage) {
	switch m := m.(type) {
	case *wire.UploadRequest:
		obj, ok := m.Object.(*wire.UploadObjectNar)
		if !ok {
			ss.send(&wire.UploadCommitted{RequestID: m.RequestID, Outcome: &wire.UploadOutcomeRejected{Reason: "only NARs"}})
			return
		}
		if _, cached := ss.srv.Cache.Get(obj.StorePath); cached {
			ss.send(&wire.UploadGrant{RequestID: m.RequestID, Target: &wire.GrantTargetSkip{}})
			return
		}
		ss.mu.Lock()
		ss.uploads[m.RequestID] = &upload{path: obj.StorePath}
		ss.mu.Unlock()
		ss.send(&wire.UploadGrant{RequestID: m.RequestID, Target: &wire.GrantTargetPassthrough{}})
	case *wire.UploadChunk:
		ss.uploadChunk(m)
	case *wire.UploadFinished:
		ss.uploadFinished(m)
	case *wire.UploadCancel:
		ss.mu.Lock()
		delete(ss.uploads, m.RequestID)
		ss.mu.Unlock()
	}
}

func (ss *Session) uploadChunk(m *wire.UploadChunk) {
	ss.mu.Lock()
	u := ss.uploads[m.RequestID]
	if u != nil && m.Offset != uint64(len(u.buf)) {
		ss.violations = append(ss.violations, fmt.Sprintf("upload %d: chunk at %d after %d bytes", m.RequestID, m.Offset, len(u.buf)))
	}
	var finished *wire.UploadFinished
	if u != nil {
		u.buf = append(u.buf, m.Data...)
		u.final = m.IsFinal
		finished = u.finished
	}
	ss.mu.Unlock()
	if m.IsFinal && finished != nil {
		ss.finishUpload(finished)
	}
}

func (ss *Session) uploadFinished(m *wire.UploadFinished) {
	ss.mu.Lock()
	u := ss.uploads[m.RequestID]
	early := u != nil && !u.final
	if early {
		u.finished = m
	}
	ss.mu.Unlock()
	if !early {
		ss.finishUpload(m)
	}
}

// finishUpload checks the upload as the real server must (gradient-protocol §7.3) and
// stores it.
func (ss *Session) finishUpload(m *wire.UploadFinished) {
	ss.mu.Lock()
	u := ss.uploads[m.RequestID]
	delete(ss.uploads, m.RequestID)
	ss.mu.Unlock()
	meta, ok := m.Metadata.(*wire.NarUploadMetadata)
	if u == nil || !ok {
		ss.send(&wire.UploadCommitted{RequestID: m.RequestID, Outcome: &wire.UploadOutcomeRejected{Reason: "no such upload"}})
		return
	}
	if err := verify(u.buf, meta); err != nil {
		ss.violate("upload of %s: %v", u.path, err)
		ss.send(&wire.UploadCommitted{RequestID: m.RequestID, Outcome: &wire.UploadOutcomeRejected{Reason: err.Error()}})
		return
	}
	e := &Entry{StorePath: u.path, Compressed: u.buf, FileHash: meta.FileHash, NarHash: meta.NarHash,
		NarSize: meta.NarSize, References: meta.References}
	e.Deriver, _ = meta.Deriver.Get()
	e.CA, _ = meta.CA.Get()
	ss.srv.Cache.Put(e)
	ss.send(&wire.UploadCommitted{RequestID: m.RequestID, Outcome: &wire.UploadOutcomeOk{}})
}

func verify(compressed []byte, meta *wire.NarUploadMetadata) error {
	fileSum := sha256.Sum256(compressed)
	want, err := nixexec.ParseSHA256(meta.FileHash)
	if err != nil {
		return fmt.Errorf("file_hash: %w", err)
	}
	if uint64(len(compressed)) != meta.FileSize || !bytes.Equal(fileSum[:], want) {
		return fmt.Errorf("got %d bytes hashing %s, metadata says %d bytes, %s",
			len(compressed), nixexec.SHA256Text(fileSum[:]), meta.FileSize, meta.FileHash)
	}
	dec, err := zstd.NewReader(bytes.NewReader(compressed), zstd.WithDecoderMaxMemory(nixexec.MaxDecoderMemory))
	if err != nil {
		return err
	}
	defer dec.Close()
	h := sha256.New()
	n, err := io.Copy(h, dec)
	if err != nil {
		return fmt.Errorf("decompressing: %w", err)
	}
	if got := nixexec.SHA256Text(h.Sum(nil)); uint64(n) != meta.NarSize || got != meta.NarHash {
		return fmt.Errorf("NAR is %d bytes hashing %s, metadata says %d bytes, %s", n, got, meta.NarSize, meta.NarHash)
	}
	for _, r := range meta.References {
		if path.Base(r) != r {
			return fmt.Errorf("reference %q is not in hash-name form", r)
		}
	}
	return nil
}

// chunkSize is the NarPush payload (gradient-protocol §1.3 BULK_CHUNK_SIZE).
const chunkSize = 512 << 10

func (ss *Session) serveNars(jobID string, paths []string) {
	for _, p := range paths {
		ss.serveNarFrom(jobID, p, 0)
	}
}

// serveNarFrom streams one cached NAR from offset: a header, then chunks.
func (ss *Session) serveNarFrom(jobID, storePath string, offset uint64) {
	e, ok := ss.srv.Cache.Get(storePath)
	if !ok {
		ss.send(&wire.NarUnavailable{JobID: jobID, StorePath: storePath, Reason: "not in the cache"})
		return
	}
	total := uint64(len(e.Compressed))
	if offset > total {
		offset = 0
	}
	ss.send(&wire.NarStreamHeader{JobID: jobID, StorePath: storePath, TotalBytes: total, StreamToken: "len-" + strconv.FormatUint(total, 10)})
	for {
		end := min(offset+chunkSize, total)
		ss.send(&wire.NarPush{JobID: jobID, StorePath: storePath, Data: e.Compressed[offset:end], Offset: offset, IsFinal: end == total})
		if end == total {
			return
		}
		offset = end
	}
}

// Delete forgets a stored path.
func (c *Cache) Delete(storePath string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.entries, storePath)
}
