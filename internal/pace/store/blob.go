package store

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
)

// Blob framing. The checksum is CRC-32C: it runs on the CPU's CRC32 instruction (SSE4.2,
// ARMv8), about an order of magnitude faster than a cryptographic hash over a 64 KiB value, and
// it detects the torn writes, truncations and flipped bits a disk produces. It is not meant to
// stop an adversary who can write the store directory; such a one owns the cache anyway.
const (
	blobMagic      = "PCSB"
	blobVersion    = 1
	codecIdentity  = 0 // every record carries its codec, so compressed blobs need no migration
	blobHeaderLen  = 4 + 1 + 1 + 2 + 4 + 8
	blobTrailerLen = 4
	blobOverhead   = blobHeaderLen + blobTrailerLen
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// blobSize is the number of bytes a blob of this key and value occupies on disk.
func blobSize(keyLen, valueLen int) int64 { return int64(blobOverhead + keyLen + valueLen) }

// writeBlob writes the framed key and value to w.
func writeBlob(w io.Writer, key, value []byte) error {
	head := make([]byte, blobHeaderLen, blobHeaderLen+len(key))
	copy(head, blobMagic)
	head[4] = blobVersion
	head[5] = codecIdentity
	binary.BigEndian.PutUint32(head[8:], uint32(len(key)))
	binary.BigEndian.PutUint64(head[12:], uint64(len(value)))
	head = append(head, key...)
	sum := crc32.Update(crc32.Update(0, castagnoli, head), castagnoli, value)
	if _, err := w.Write(head); err != nil {
		return err
	}
	if _, err := w.Write(value); err != nil {
		return err
	}
	_, err := w.Write(binary.BigEndian.AppendUint32(nil, sum))
	return err
}

// decodeBlob verifies a whole blob read from disk and returns its value as a sub-slice of buf
// (capacity clipped). Any failure wraps errCorrupt.
func decodeBlob(buf, key []byte) ([]byte, error) {
	if len(buf) < blobOverhead {
		return nil, fmt.Errorf("%d bytes, shorter than a blob header: %w", len(buf), errCorrupt)
	}
	if string(buf[:4]) != blobMagic || buf[4] != blobVersion || buf[5] != codecIdentity {
		return nil, fmt.Errorf("bad magic, version or codec %q: %w", buf[:6], errCorrupt)
	}
	keyLen := uint64(binary.BigEndian.Uint32(buf[8:]))
	valueLen := binary.BigEndian.Uint64(buf[12:])
	if valueLen > uint64(len(buf)) || uint64(len(buf)) != blobOverhead+keyLen+valueLen {
		return nil, fmt.Errorf("header declares %d+%d bytes in a %d-byte file (truncated?): %w", keyLen, valueLen, len(buf), errCorrupt)
	}
	body := len(buf) - blobTrailerLen
	if got, want := crc32.Checksum(buf[:body], castagnoli), binary.BigEndian.Uint32(buf[body:]); got != want {
		return nil, fmt.Errorf("checksum %08x, recorded %08x: %w", got, want, errCorrupt)
	}
	start := blobHeaderLen + int(keyLen)
	if !bytes.Equal(buf[blobHeaderLen:start], key) {
		return nil, fmt.Errorf("blob belongs to another key: %w", errCorrupt)
	}
	return buf[start:body:body], nil
}
