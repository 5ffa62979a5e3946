package nixexec

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/ulikunitz/xz"
)

func xzBytes(t *testing.T, data []byte, dict int) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := xz.WriterConfig{DictCap: dict}.NewWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// gradient-server §14: NARs from upstream caches come xz, bzip2 or uncompressed; zstd is
// gradient's own.
func TestDecompressorReadsEachCompression(t *testing.T) {
	data := bytes.Repeat([]byte("nix-archive-1 "), 1000)
	zw, _ := zstd.NewWriter(nil)
	cases := map[string][]byte{
		"":     zw.EncodeAll(data, nil),
		"zstd": zw.EncodeAll(data, nil),
		"xz":   xzBytes(t, data, 8<<20),
		"none": data,
	}
	d, err := newDecompressor()
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for c, in := range cases {
		r, err := d.reader(bytes.NewReader(in), c)
		if err != nil {
			t.Fatalf("%q: %v", c, err)
		}
		got, err := io.ReadAll(r)
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("%q: %d bytes, %v", c, len(got), err)
		}
	}
	if _, err := d.reader(bytes.NewReader(data), "lz4"); !errors.Is(err, ErrCompression) {
		t.Fatalf("unknown compression: %v", err)
	}
}

// An xz stream whose dictionary is over the cap is refused before the decoder allocates it.
func TestDecompressorRefusesAHugeXZDictionary(t *testing.T) {
	d, err := newDecompressor()
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	_, err = d.reader(bytes.NewReader(xzBytes(t, []byte("x"), 128<<20)), "xz")
	if !errors.Is(err, ErrCompression) {
		t.Fatalf("a 128 MiB dictionary: %v", err)
	}
	if _, err := d.reader(bytes.NewReader([]byte{0xfd}), "xz"); !errors.Is(err, ErrCompression) {
		t.Fatalf("a truncated stream: %v", err)
	}
}
