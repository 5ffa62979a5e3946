package lease

import (
	"errors"
	"testing"
)

func TestReplySignatureRoundTrip(t *testing.T) {
	object := []byte("\x01envelope: compressed object bytes")
	sig := SignReply(workerKey, "0123456789abcdef0123456789abcdef", object)
	if err := VerifyReply(workerKey.Public(), "0123456789abcdef0123456789abcdef", object, sig); err != nil {
		t.Fatalf("genuine reply: %v", err)
	}
	empty := SignReply(workerKey, "corr", nil)
	if err := VerifyReply(workerKey.Public(), "corr", []byte{}, empty); err != nil {
		t.Fatalf("failed compile's reply (empty object): %v", err)
	}
}

func TestReplySignatureRefusals(t *testing.T) {
	const corr = "0123456789abcdef0123456789abcdef"
	object := []byte("object")
	sig := SignReply(workerKey, corr, object)
	flipped := append([]byte(nil), sig...)
	flipped[10] ^= 1
	leaseSig := workerKey.Sign("pace-lease-v1", []byte(corr), object)
	cases := map[string]struct {
		key         []byte
		corr        string
		object, sig []byte
	}{
		"empty key":                  {nil, corr, object, sig},
		"empty signature":            {workerKey.Public(), corr, object, nil},
		"another worker's key":       {strangerKey.Public(), corr, object, sig},
		"another request":            {workerKey.Public(), "fedcba9876543210fedcba9876543210", object, sig},
		"object changed":             {workerKey.Public(), corr, []byte("objecT"), sig},
		"signature flipped":          {workerKey.Public(), corr, object, flipped},
		"signed under another label": {workerKey.Public(), corr, object, leaseSig},
	}
	for name, c := range cases {
		if err := VerifyReply(c.key, c.corr, c.object, c.sig); !errors.Is(err, ErrReplyUnauthenticated) {
			t.Errorf("%s: got %v, want ErrReplyUnauthenticated", name, err)
		}
	}
}
