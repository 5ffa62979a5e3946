package cacheverbs

import (
	"bytes"
	"testing"

	"github.com/buildfleet/buildfleet/internal/pace/value"
)

// FuzzParseStore: whatever a client sends, ParseStore either refuses it with a classified
// failure or returns a value that decodes, with the object, the region count, the key and the
// group that were sent. Seeds live in testdata/fuzz/FuzzParseStore.
func FuzzParseStore(f *testing.F) {
	f.Fuzz(func(t *testing.T, key, group []byte, srcRoot, buildTree string, payload []byte) {
		r, err := ParseStore([][]byte{key, group, []byte(srcRoot), []byte(buildTree), payload})
		if err != nil {
			if Classify(err) == FailureNone || Classify(err) == FailureStorageWrite {
				t.Fatalf("validation error %v classified %d", err, Classify(err))
			}
			Refusal(err) // must not panic: every code it picks is live
			return
		}
		in, _ := value.Decode(payload)
		out, err := value.Decode(r.Value)
		if err != nil {
			t.Fatalf("canonical value does not decode: %v", err)
		}
		if !bytes.Equal(in.Object, out.Object) || len(in.Regions) != len(out.Regions) {
			t.Fatal("canonicalization changed the object or the region count")
		}
		if !bytes.Equal(r.Key, key) || !bytes.Equal(r.PrefetchGroup, group) {
			t.Fatal("key or group changed")
		}
	})
}
