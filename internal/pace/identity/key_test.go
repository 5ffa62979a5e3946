package identity

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/buildfleet/buildfleet/internal/pace/edkey"
	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// fixedRandom is a deterministic random source for tests.
type fixedRandom byte

func (f fixedRandom) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(f) + byte(i)
	}
	return len(p), nil
}

type failingRandom struct{}

func (failingRandom) Read([]byte) (int, error) { return 0, errors.New("entropy pool on fire") }

func testKey(t testing.TB, b byte) *Key {
	t.Helper()
	k, err := NewKey(fixedRandom(b))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestSignaturesAreDomainSeparated(t *testing.T) {
	k := testKey(t, 1)
	sig := k.Sign(wire.LabelNodeProof, []byte("a"), []byte("b"))
	if !Verify(k.Public(), sig, wire.LabelNodeProof, []byte("a"), []byte("b")) {
		t.Fatal("own signature does not verify")
	}
	for name, ok := range map[string]bool{
		"other label":        Verify(k.Public(), sig, wire.LabelRaftProof, []byte("a"), []byte("b")),
		"fields re-split":    Verify(k.Public(), sig, wire.LabelNodeProof, []byte("ab"), nil),
		"other key":          Verify(testKey(t, 2).Public(), sig, wire.LabelNodeProof, []byte("a"), []byte("b")),
		"short signature":    Verify(k.Public(), sig[:63], wire.LabelNodeProof, []byte("a"), []byte("b")),
		"short key":          Verify(k.Public()[:31], sig, wire.LabelNodeProof, []byte("a"), []byte("b")),
		"field list changed": Verify(k.Public(), sig, wire.LabelNodeProof, []byte("a"), []byte("c")),
	} {
		if ok {
			t.Errorf("%s: verified", name)
		}
	}
}

func TestSignWithUnknownLabelPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("signing under a label wire does not define did not panic")
		}
	}()
	testKey(t, 1).Sign("pace-made-up-v1")
}

// TestKeyNeverPrintsItsPrivateHalf formats a key every way a log line
// might and looks for the seed in any encoding.
func TestKeyNeverPrintsItsPrivateHalf(t *testing.T) {
	k := testKey(t, 7)
	seed := k.seed()
	secrets := []string{
		hex.EncodeToString(seed), fmt.Sprintf("%X", seed), edkey.Encoding.EncodeToString(seed),
		string(seed), fmt.Sprint([]byte(k.private)), fmt.Sprintf("%x", []byte(k.private)),
	}
	var logged bytes.Buffer
	slog.New(slog.NewJSONHandler(&logged, nil)).Info("identity", "key", k)
	slog.New(slog.NewTextHandler(&logged, nil)).Info("identity", "key", k)
	outputs := []string{
		fmt.Sprint(k), fmt.Sprintf("%v %+v %#v %s %x %X %q %d", k, k, k, k, k, k, k, k),
		fmt.Sprintf("%v", struct{ K *Key }{k}), fmt.Sprintf("%+v", []*Key{k}), logged.String(),
	}
	for _, out := range outputs {
		if !strings.Contains(out, k.PublicText()) && !strings.Contains(out, "0x") {
			t.Errorf("output %q does not show the public key", out)
		}
		for _, secret := range secrets {
			if strings.Contains(out, secret) {
				t.Fatalf("output %q contains the private key", out)
			}
		}
	}
}
