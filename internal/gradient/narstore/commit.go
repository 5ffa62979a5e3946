package narstore

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"

	"github.com/klauspost/compress/zstd"

	"github.com/buildfleet/buildfleet/internal/gradient/nixhash"
)

// Expect is what the uploader declared (UploadFinished's NarUploadMetadata): the
// compressed file's size and SHA-256 and the NAR's.
type Expect struct {
	FileSize int64
	FileHash nixhash.SHA256
	NarSize  int64
	NarHash  nixhash.SHA256
}

// copyBufferSize is the read size from the decoder: large enough that hashing, not call
// overhead, dominates.
const copyBufferSize = 256 << 10

// narMagic is how every NAR begins: the string "nix-archive-1" as the NAR format writes
// strings (a little-endian u64 length, the bytes, zero padding to 8).
var narMagic = []byte("\x0d\x00\x00\x00\x00\x00\x00\x00nix-archive-1\x00\x00\x00")

// Commit verifies the staged bytes against want and moves them into place as the object of
// storeHash, replacing any object stored there. On a failed check the partial is deleted and
// the error is a *VerifyError; on an I/O error the partial is kept. Either way the Staged is
// finished.
func (st *Staged) Commit(storeHash string, want Expect) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.f == nil {
		return ErrFinished
	}
	dest, err := st.s.objectPath(storeHash)
	if err != nil {
		return errors.Join(err, st.finish(false))
	}
	if err := st.verify(want); err != nil {
		var ve *VerifyError
		return errors.Join(err, st.finish(errors.As(err, &ve)))
	}
	if err := st.install(dest); err != nil {
		return errors.Join(fmt.Errorf("narstore: commit: %w", err), st.finish(false))
	}
	return nil
}

// verify runs the checks in order: the cheap ones on the compressed bytes first, so a
// wrong upload is never fed to the decompressor.
func (st *Staged) verify(want Expect) error {
	if st.size != want.FileSize {
		return verifyErr(CheckFileSize, "%d bytes staged, %d declared", st.size, want.FileSize)
	}
	var got nixhash.SHA256
	st.sum.Sum(got[:0])
	if !got.Equal(want.FileHash) {
		return verifyErr(CheckFileHash, "staged bytes hash to %s, %s declared", got, want.FileHash)
	}
	if want.NarSize < 0 {
		return verifyErr(CheckNarSize, "negative NAR size declared")
	}
	return st.verifyNAR(want)
}

// verifyNAR decompresses the staged file (streaming, window capped) and hashes the output,
// stopping one byte past the declared NAR size. Decoding and hashing run on two goroutines
// (each costs about as much as the other), handing over a few buffers.
func (st *Staged) verifyNAR(want Expect) error {
	dec, err := zstd.NewReader(io.NewSectionReader(st.f, 0, st.size),
		zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(st.s.opts.MaxWindow),
		zstd.WithDecoderMaxMemory(st.s.opts.MaxWindow))
	if err != nil {
		return verifyErr(CheckDecompress, "%v", err)
	}
	defer dec.Close()
	sink := &narSink{sum: sha256.New()}
	n, err := pipeline(io.LimitReader(dec, want.NarSize+1), sink)
	switch {
	case err != nil:
		return verifyErr(CheckDecompress, "after %d bytes: %v", n, err)
	case n > want.NarSize:
		return verifyErr(CheckNarSize, "output passed the declared %d bytes", want.NarSize)
	case n != want.NarSize:
		return verifyErr(CheckNarSize, "%d bytes decompressed, %d declared", n, want.NarSize)
	case !bytes.Equal(sink.head[:sink.headLen], narMagic):
		return verifyErr(CheckNarFormat, "the output does not start with the NAR magic")
	}
	var got nixhash.SHA256
	sink.sum.Sum(got[:0])
	if !got.Equal(want.NarHash) {
		return verifyErr(CheckNarHash, "NAR hashes to %s, %s declared", got, want.NarHash)
	}
	return nil
}

// pipelineBuffers is how many buffers circulate between the reader and the writer.
const pipelineBuffers = 4

// pipeline copies r to w like io.Copy, with the reads and the writes on two goroutines.
func pipeline(r io.Reader, w io.Writer) (int64, error) {
	full := make(chan []byte, pipelineBuffers)
	free := make(chan []byte, pipelineBuffers)
	for range pipelineBuffers {
		free <- make([]byte, copyBufferSize)
	}
	written := make(chan int64)
	go func() {
		var n int64
		for b := range full {
			w.Write(b) // narSink never fails
			n += int64(len(b))
			free <- b[:cap(b)]
		}
		written <- n
	}()
	var err error
	for err == nil {
		b := <-free
		var k int
		k, err = io.ReadFull(r, b)
		if k > 0 {
			full <- b[:k]
		}
	}
	close(full)
	n := <-written
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		err = nil
	}
	return n, err
}

// install makes the verified partial the object: fsync, rename, fsync both directories.
func (st *Staged) install(dest string) error {
	if err := st.f.Sync(); err != nil {
		return err
	}
	if err := os.Rename(st.path, dest); err != nil {
		return err
	}
	closeErr := st.f.Close()
	st.f = nil
	st.s.release(st.name)
	return errors.Join(closeErr, syncDir(st.s.objects), syncDir(st.s.partials))
}

// narSink hashes the decompressed NAR and keeps its first bytes for the magic check.
type narSink struct {
	sum     hash.Hash
	head    [24]byte
	headLen int
}

func (s *narSink) Write(p []byte) (int, error) {
	if s.headLen < len(s.head) {
		s.headLen += copy(s.head[s.headLen:], p)
	}
	return s.sum.Write(p)
}
