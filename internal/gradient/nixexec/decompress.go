package nixexec

import (
	"bufio"
	"compress/bzip2"
	"errors"
	"fmt"
	"io"

	"github.com/klauspost/compress/zstd"
	"github.com/ulikunitz/xz"
)

// MaxXZDictionary caps the LZMA2 dictionary of an xz NAR from an upstream cache (xz -9
// uses 64 MiB; Nix writes 8 MiB), checked in the block header before the decoder allocates
// it.
const MaxXZDictionary = 64 << 20

// ErrCompression: a NAR's compression is unknown or its stream is refused.
var ErrCompression = errors.New("nixexec: NAR compression")

// decompressor opens items' NARs by their compression, sharing one zstd decoder.
type decompressor struct {
	zstd *zstd.Decoder
}

func newDecompressor() (*decompressor, error) {
	dec, err := zstd.NewReader(nil, zstd.WithDecoderMaxMemory(MaxDecoderMemory), zstd.WithDecoderConcurrency(1))
	if err != nil {
		return nil, fmt.Errorf("zstd: %w", err)
	}
	return &decompressor{zstd: dec}, nil
}

func (d *decompressor) Close() { d.zstd.Close() }

// reader decompresses rc as compression says: "" and "zstd" (gradient's own caches),
// "xz", "bzip2" or "none" (upstream caches, gradient-server §14).
func (d *decompressor) reader(rc io.Reader, compression string) (io.Reader, error) {
	switch compression {
	case "", "zstd":
		if err := d.zstd.Reset(rc); err != nil {
			return nil, fmt.Errorf("zstd: %w", err)
		}
		return d.zstd, nil
	case "xz":
		br := bufio.NewReaderSize(rc, 64<<10)
		if err := checkXZDictionary(br); err != nil {
			return nil, err
		}
		r, err := xz.ReaderConfig{SingleStream: true}.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("%w: xz: %w", ErrCompression, err)
		}
		return r, nil
	case "bzip2":
		return bzip2.NewReader(rc), nil
	case "none":
		return rc, nil
	}
	return nil, fmt.Errorf("%w: %q", ErrCompression, compression)
}

// checkXZDictionary reads the first block header of an xz stream and refuses an LZMA2
// dictionary over MaxXZDictionary (the decoder would allocate it whole).
func checkXZDictionary(br *bufio.Reader) error {
	head, err := br.Peek(12 + 2)
	if err != nil {
		return fmt.Errorf("%w: xz: short stream: %w", ErrCompression, err)
	}
	size := (int(head[12]) + 1) * 4
	if head[12] == 0 { // the index: an empty stream
		return nil
	}
	block, err := br.Peek(12 + size)
	if err != nil {
		return fmt.Errorf("%w: xz: short block header: %w", ErrCompression, err)
	}
	return checkXZBlockHeader(block[12:])
}

// checkXZBlockHeader finds each LZMA2 filter's dictionary size in a block header.
func checkXZBlockHeader(h []byte) error {
	flags := h[1]
	i := 2
	skip := func() bool { // one multibyte integer
		for ; i < len(h); i++ {
			if h[i]&0x80 == 0 {
				i++
				return true
			}
		}
		return false
	}
	for bit := byte(0x40); bit <= 0x80 && bit != 0; bit <<= 1 {
		if flags&bit != 0 && !skip() {
			return fmt.Errorf("%w: xz: malformed block header", ErrCompression)
		}
	}
	for range int(flags&3) + 1 {
		if i+2 >= len(h) {
			return fmt.Errorf("%w: xz: malformed filter flags", ErrCompression)
		}
		id, propSize := h[i], int(h[i+1])
		i += 2
		if id == 0x21 && propSize == 1 && xzDictionary(h[i]) > MaxXZDictionary {
			return fmt.Errorf("%w: xz: dictionary of %d bytes, at most %d", ErrCompression, xzDictionary(h[i]), MaxXZDictionary)
		}
		i += propSize
	}
	return nil
}

// xzDictionary decodes LZMA2's dictionary-size byte.
func xzDictionary(b byte) int64 {
	if b >= 40 {
		return 1<<32 - 1
	}
	return int64(2|b&1) << (b/2 + 11)
}
