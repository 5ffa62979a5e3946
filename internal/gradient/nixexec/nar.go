package nixexec

import (
	"context"
	"crypto/sha256"
	"fmt"
	"hash"
	"io"
	"strings"

	"github.com/klauspost/compress/zstd"
)

// CompressionLevel is the zstd level of every NAR gradient stores (gradient-protocol §7.3).
const CompressionLevel = 6

// NARStats describe one dumped NAR: the uncompressed NAR and the zstd stream made of it.
type NARStats struct {
	NarSize  uint64
	NarHash  []byte // SHA-256 of the NAR
	FileSize uint64
	FileHash []byte // SHA-256 of the compressed bytes
}

// NewNAREncoder returns the zstd encoder NARs are compressed with, writing to w.
func NewNAREncoder(w io.Writer) (*zstd.Encoder, error) {
	return zstd.NewWriter(w, zstd.WithEncoderLevel(zstd.EncoderLevelFromZstd(CompressionLevel)))
}

// DumpNAR streams the NAR of a valid store path (`nix store dump-path`) through zstd level 6
// to w, hashing the NAR and the compressed stream on the way: one pass, memory bounded by the
// encoder's window whatever the path's size. It reads through the store, not the file
// system (as `nix-store --dump` does), so a worker whose store is a chroot store (--store
// or NIX_CONFIG's store) dumps its own paths.
func (n *Nix) DumpNAR(ctx context.Context, storePath string, w io.Writer) (NARStats, error) {
	file := &countingHash{h: sha256.New()}
	enc, err := NewNAREncoder(io.MultiWriter(w, file))
	if err != nil {
		return NARStats{}, fmt.Errorf("nixexec: zstd: %w", err)
	}
	nar := &countingHash{h: sha256.New()}
	err = n.run(ctx, invocation{name: "nix", args: n.nixArgs(dumpPathArgs(storePath)...),
		stdout: io.MultiWriter(nar, enc)})
	if cerr := enc.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("nixexec: zstd: %w", cerr)
	}
	if err != nil {
		return NARStats{}, fmt.Errorf("nixexec: dump %s: %w", storePath, err)
	}
	return NARStats{NarSize: nar.n, NarHash: nar.h.Sum(nil), FileSize: file.n, FileHash: file.h.Sum(nil)}, nil
}

// dumpPathArgs: `nix store dump-path` reads a .drv argument as "its outputs" unless told
// --derivation, and --derivation on any other path means its deriver; so the flag goes
// with .drv paths only.
func dumpPathArgs(storePath string) []string {
	if strings.HasSuffix(storePath, ".drv") {
		return []string{"store", "dump-path", "--derivation", storePath}
	}
	return []string{"store", "dump-path", storePath}
}

// countingHash hashes and counts what is written to it.
type countingHash struct {
	h hash.Hash
	n uint64
}

func (c *countingHash) Write(p []byte) (int, error) {
	c.n += uint64(len(p))
	return c.h.Write(p)
}
