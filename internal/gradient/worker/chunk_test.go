package worker

import (
	"bytes"
	"testing"

	"github.com/buildfleet/buildfleet/internal/gradient/wire"
	"pgregory.net/rapid"
)

// UploadChunks are at most 512 KiB, contiguous from the resume offset, and only the last is
// final, whatever the sizes of the writes.
func TestChunkWriterSplitsTheStream(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		total := rapid.IntRange(0, 3*BulkChunkSize).Draw(t, "total")
		skip := rapid.IntRange(0, total).Draw(t, "skip")
		data := make([]byte, total)
		for i := range data {
			data[i] = byte(i * 7)
		}
		var got []*wire.UploadChunk
		cw := &chunkWriter{id: 9, skip: uint64(skip), buf: make([]byte, 0, BulkChunkSize), send: func(m wire.ClientMessage) error {
			c := *m.(*wire.UploadChunk)
			c.Data = bytes.Clone(c.Data)
			got = append(got, &c)
			return nil
		}}
		for rest := data; len(rest) > 0; {
			n := min(len(rest), rapid.IntRange(1, BulkChunkSize+100).Draw(t, "write"))
			if _, err := cw.Write(rest[:n]); err != nil {
				t.Fatal(err)
			}
			rest = rest[n:]
		}
		if err := cw.finish(); err != nil {
			t.Fatal(err)
		}
		var joined []byte
		next := uint64(skip)
		for i, c := range got {
			if c.RequestID != 9 || c.Offset != next || len(c.Data) > BulkChunkSize || c.IsFinal != (i == len(got)-1) {
				t.Fatalf("chunk %d: offset %d (want %d), %d bytes, final %v of %d", i, c.Offset, next, len(c.Data), c.IsFinal, len(got))
			}
			next += uint64(len(c.Data))
			joined = append(joined, c.Data...)
		}
		if !bytes.Equal(joined, data[skip:]) {
			t.Fatalf("sent %d bytes, want the %d after the offset", len(joined), total-skip)
		}
	})
}
