package binarycache

import (
	"context"
	"crypto/sha256"
	"errors"
	"hash"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/buildfleet/buildfleet/internal/gradient/narstore"
	"github.com/buildfleet/buildfleet/internal/gradient/nixhash"
	"github.com/buildfleet/buildfleet/internal/gradient/store"
)

// blockSize is one read and one write of a NAR stream. The last block is held back until
// the object's hash is checked, so an object of one block is verified before any byte goes
// out.
const blockSize = 1 << 20

var blockPool = sync.Pool{New: func() any { b := make([]byte, blockSize); return &b }}

// errDamaged: the stored object does not hash to its record.
var errDamaged = errors.New("the stored object does not match its file hash")

// serveNAR answers nar/{file_hash}.nar.zst with the stored file, never with bytes that do
// not hash to the recorded FileHash (see the package doc).
func (h *Handler) serveNAR(w http.ResponseWriter, r *http.Request) {
	fh, ok := strings.CutSuffix(r.PathValue("file"), ".nar.zst")
	if !ok || len(fh) != nixhash.EncodedLen(sha256.Size) || !nixhash.IsBase32(fh) {
		http.NotFound(w, r)
		return
	}
	acc, err := h.Admit(r, r.PathValue("cache"))
	if err != nil {
		h.WriteRefusal(w, r, err)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), storeCallTimeout)
	row, err := h.cfg.Store.CachedPathByFileHash(ctx, acc.Cache.ID, "sha256:"+fh)
	cancel()
	if h.lookupFailed(w, r, err) {
		return
	}
	want, err := nixhash.Parse(row.FileHash)
	if err != nil {
		h.log.Warn("binary cache: unreadable file hash", "store_hash", row.StoreHash, "err", err)
		http.NotFound(w, r)
		return
	}
	f, ok := h.openObject(w, r, row)
	if !ok {
		return
	}
	defer f.Close()
	h.stream(w, r, f, row, want)
}

// openObject opens a row's object, answering (and demoting a row whose object is missing
// or the wrong size) when it cannot be served.
func (h *Handler) openObject(w http.ResponseWriter, r *http.Request, row store.CachedPath) (io.ReadCloser, bool) {
	f, size, err := h.cfg.NARs.Open(row.StoreHash)
	switch {
	case errors.Is(err, narstore.ErrNotFound):
		h.demote(r.Context(), row.StoreHash, "the stored object is missing")
		http.NotFound(w, r)
		return nil, false
	case err != nil:
		h.log.Warn("binary cache: opening a NAR failed", "store_hash", row.StoreHash, "err", err)
		http.Error(w, "the stored object could not be opened", http.StatusInternalServerError)
		return nil, false
	case size != row.FileSize:
		f.Close()
		h.demote(r.Context(), row.StoreHash, "the stored object's size differs from the record")
		http.NotFound(w, r)
		return nil, false
	}
	return f, true
}

// stream sends the object, hashing as it goes and holding the last block back until the
// hash is checked. A mismatch found after the first bytes went out aborts the response,
// so the client gets fewer bytes than Content-Length and fails.
func (h *Handler) stream(w http.ResponseWriter, r *http.Request, f io.Reader, row store.CachedPath, want nixhash.SHA256) {
	cur, next := blockPool.Get().(*[]byte), blockPool.Get().(*[]byte)
	defer blockPool.Put(cur)
	defer blockPool.Put(next)
	sum := sha256.New()
	remaining := row.FileSize
	n, err := readBlock(f, *cur, &remaining, sum)
	if err == nil && remaining == 0 {
		err = checkSum(sum, want)
	}
	if err != nil { // nothing sent yet: a clean answer
		h.streamFailed(r, row, err)
		h.answerUnreadable(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/x-nix-nar")
	w.Header().Set("Content-Length", strconv.FormatInt(row.FileSize, 10))
	if r.Method == http.MethodHead {
		return
	}
	for remaining > 0 {
		m, err := readBlock(f, *next, &remaining, sum)
		if err == nil && remaining == 0 {
			err = checkSum(sum, want)
		}
		if err != nil {
			h.streamFailed(r, row, err)
			panic(http.ErrAbortHandler) // cut the response short: never a whole bad object
		}
		if _, err := w.Write((*cur)[:n]); err != nil {
			return // the client went away
		}
		cur, next, n = next, cur, m
	}
	if _, err := w.Write((*cur)[:n]); err == nil {
		h.markFetched(r.Context(), row.StoreHash)
	}
}

// answerUnreadable answers an object that failed before its first byte went out: 404 for
// damage (the row is demoted), 500 for a read error.
func (h *Handler) answerUnreadable(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, errDamaged) {
		http.NotFound(w, r)
		return
	}
	http.Error(w, "the stored object could not be read", http.StatusInternalServerError)
}

// readBlock fills up to one block from f, hashing it and counting it off remaining.
func readBlock(f io.Reader, buf []byte, remaining *int64, sum hash.Hash) (int, error) {
	n := int(min(int64(len(buf)), *remaining))
	if _, err := io.ReadFull(f, buf[:n]); err != nil {
		return 0, err
	}
	sum.Write(buf[:n])
	*remaining -= int64(n)
	return n, nil
}

func checkSum(sum hash.Hash, want nixhash.SHA256) error {
	var got nixhash.SHA256
	sum.Sum(got[:0])
	if !got.Equal(want) {
		return errDamaged
	}
	return nil
}

// streamFailed demotes the row of a damaged object; a read error leaves it (retryable).
func (h *Handler) streamFailed(r *http.Request, row store.CachedPath, err error) {
	if errors.Is(err, errDamaged) {
		h.demote(r.Context(), row.StoreHash, err.Error())
		return
	}
	h.log.Warn("binary cache: reading a NAR failed", "store_hash", row.StoreHash, "err", err)
}

func (h *Handler) markFetched(ctx context.Context, storeHash string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), storeCallTimeout)
	defer cancel()
	if err := h.cfg.Store.MarkFetched(ctx, storeHash); err != nil {
		h.log.Debug("binary cache: stamping a fetch failed", "store_hash", storeHash, "err", err)
	}
}
