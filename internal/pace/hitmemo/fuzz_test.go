package hitmemo

import (
	"bytes"
	"testing"
)

// Seed corpora live in testdata/fuzz/FuzzDecode and run as unit tests under plain go test.
func FuzzDecode(f *testing.F) {
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := Decode(b)
		if err != nil {
			return
		}
		again, err := Encode(e)
		if err != nil || !bytes.Equal(again, b) {
			t.Fatalf("Encode(Decode(b)) = %x, %v; want b", again, err)
		}
	})
}
