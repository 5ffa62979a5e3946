package store

import (
	"bytes"
	"errors"
	"testing"
)

func encodeBlob(t testing.TB, key, value []byte) []byte {
	var b bytes.Buffer
	if err := writeBlob(&b, key, value); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestBlobLayout(t *testing.T) {
	b := encodeBlob(t, []byte("key"), []byte("value"))
	if int64(len(b)) != blobSize(3, 5) {
		t.Fatalf("blob of %d bytes, blobSize says %d", len(b), blobSize(3, 5))
	}
	want := []byte("PCSB\x01\x00\x00\x00\x00\x00\x00\x03\x00\x00\x00\x00\x00\x00\x00\x05keyvalue")
	if !bytes.Equal(b[:len(b)-4], want) {
		t.Fatalf("blob = %q, want %q + checksum", b, want)
	}
	v, err := decodeBlob(b, []byte("key"))
	if err != nil || string(v) != "value" {
		t.Fatalf("decodeBlob = %q, %v", v, err)
	}
	if cap(v) != len(v) {
		t.Fatal("the decoded value's capacity reaches into the checksum")
	}
}

func TestDecodeBlobRefusesDamage(t *testing.T) {
	good := encodeBlob(t, []byte("key"), []byte("value"))
	damaged := func(i int) []byte { b := bytes.Clone(good); b[i] ^= 1; return b }
	tests := map[string]struct {
		buf []byte
		key string
	}{
		"empty":              {nil, "key"},
		"header only":        {good[:blobHeaderLen], "key"},
		"one byte short":     {good[:len(good)-1], "key"},
		"one byte long":      {append(bytes.Clone(good), 0), "key"},
		"magic":              {damaged(1), "key"},
		"version":            {damaged(4), "key"},
		"codec":              {damaged(5), "key"},
		"key length":         {damaged(11), "key"},
		"value length":       {damaged(19), "key"},
		"huge value length":  {append(append(bytes.Clone(good[:12]), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff), good[20:]...), "key"},
		"key byte":           {damaged(20), "key"},
		"value byte":         {damaged(25), "key"},
		"checksum":           {damaged(len(good) - 1), "key"},
		"another key's blob": {good, "other"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			if _, err := decodeBlob(tt.buf, []byte(tt.key)); !errors.Is(err, errCorrupt) {
				t.Fatalf("decodeBlob: %v, want errCorrupt", err)
			}
		})
	}
}

func FuzzDecodeBlob(f *testing.F) {
	f.Fuzz(func(t *testing.T, buf, key []byte) {
		v, err := decodeBlob(buf, key)
		if err != nil {
			if !errors.Is(err, errCorrupt) {
				t.Fatalf("error %v does not wrap errCorrupt", err)
			}
			return
		}
		if again := encodeBlob(t, key, v); !bytes.Equal(again, buf) {
			t.Fatal("a blob that verifies does not re-encode to itself")
		}
	})
}
