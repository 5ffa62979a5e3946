package api_test

import (
	"bytes"
	"testing"

	"github.com/buildfleet/buildfleet/internal/gradient/aeadbox"
	"github.com/buildfleet/buildfleet/internal/gradient/api"
	"github.com/buildfleet/buildfleet/internal/gradient/binarycache"
)

// A cache is created with its signing key: the store keeps it sealed, the API shows only
// the public key (on create, show and list), and that key verifies the sealed key's
// signatures.
func TestCacheIsCreatedWithASigningKey(t *testing.T) {
	box, err := aeadbox.New(bytes.Repeat([]byte{3}, 32))
	if err != nil {
		t.Fatal(err)
	}
	keys := binarycache.NewKeys(box, "ci.example", nil)
	h := newHarness(t, func(c *api.Config) { c.CacheKeys = keys })
	created, err := h.admin.CreateCache(h.ctx, api.CreateCacheRequest{Name: "main", Public: true})
	if err != nil {
		t.Fatal(err)
	}
	if !created.HasSigningKey || len(created.PublicKey) < len("ci.example-main-1:")+40 ||
		created.PublicKey[:len("ci.example-main-1:")] != "ci.example-main-1:" {
		t.Fatalf("created cache %+v: want a public key named ci.example-main-1", created)
	}
	shown, err := h.admin.Cache(h.ctx, "main")
	if err != nil || shown.PublicKey != created.PublicKey {
		t.Fatalf("show: %+v, %v", shown, err)
	}
	list, err := h.admin.ListCaches(h.ctx)
	if err != nil || len(list) != 1 || list[0].PublicKey != created.PublicKey {
		t.Fatalf("list: %+v, %v", list, err)
	}
	row, err := h.store.CacheByName(h.ctx, "main")
	if err != nil {
		t.Fatal(err)
	}
	key, err := keys.Open(row.SigningKeyEnc)
	if err != nil {
		t.Fatal(err)
	}
	if !binarycache.Verify(created.PublicKey, "fingerprint", key.Sign("fingerprint")) {
		t.Errorf("the shown public key does not verify the stored key's signatures")
	}
	h.remember(key.SecretText())
}
