package binarycache

import (
	"bytes"
	"encoding/base64"
	"errors"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/buildfleet/buildfleet/internal/gradient/store"
)

func TestAccess(t *testing.T) {
	r := newRig(t)
	basic := func(key string) string {
		return "Basic " + base64.StdEncoding.EncodeToString([]byte("nix:"+key))
	}
	cases := []struct {
		name, cache, auth string
		want              int
	}{
		{"public cache, anonymous", "pub", "", http.StatusOK},
		{"private cache, anonymous", "priv", "", http.StatusUnauthorized},
		{"unknown cache, anonymous: same answer as private", "nope", "", http.StatusUnauthorized},
		{"private cache, GRAD key", "priv", r.admin, http.StatusOK},
		{"private cache, Bearer GRAD key", "priv", "Bearer " + r.admin, http.StatusOK},
		{"private cache, Basic with the key as password (netrc)", "priv", basic(r.admin), http.StatusOK},
		{"private cache, key pinned to it", "priv", r.pinnedPriv, http.StatusOK},
		{"private cache, key pinned to another cache", "priv", r.pinnedPub, http.StatusForbidden},
		{"unknown cache, pinned key learns nothing", "nope", r.pinnedPub, http.StatusForbidden},
		{"unknown cache, admin key", "nope", r.admin, http.StatusNotFound},
		{"private cache, wrong key", "priv", r.admin + "x", http.StatusUnauthorized},
		{"public cache, wrong key is refused, not downgraded", "pub", r.admin + "x", http.StatusUnauthorized},
		{"private cache, malformed header", "priv", "Token abc", http.StatusUnauthorized},
	}
	for _, c := range cases {
		status, _, err := r.get("/cache/"+c.cache+"/nix-cache-info", c.auth)
		if err != nil || status != c.want {
			t.Errorf("%s: %d (%v), want %d", c.name, status, err, c.want)
		}
	}
}

func TestAnonymousCanBeTurnedOff(t *testing.T) {
	r := newRig(t, func(c *Config) { c.DenyAnonymous = true })
	if status, _, _ := r.get("/cache/pub/nix-cache-info", ""); status != http.StatusUnauthorized {
		t.Errorf("anonymous on a public cache with anonymous access off: %d, want 401", status)
	}
	if status, _, _ := r.get("/cache/pub/nix-cache-info", r.pinnedPub); status != http.StatusOK {
		t.Errorf("keyed: %d, want 200", status)
	}
}

func TestCacheInfo(t *testing.T) {
	r := newRig(t)
	_, body, _ := r.get("/cache/pub/nix-cache-info", "")
	if !strings.Contains(string(body), "StoreDir: /nix/store\n") || !strings.Contains(string(body), "WantMassQuery: 1\n") {
		t.Errorf("nix-cache-info:\n%s", body)
	}
}

func TestNarInfoIsSignedAndRecorded(t *testing.T) {
	r := newRig(t)
	dep := r.put("dep", 100, nil, r.pub)
	p := r.put("app", 5000, []string{dep.row.StorePath, "/nix/store/" + storeHashOf("app") + "-app"}, r.pub)
	status, body, _ := r.get("/cache/pub/"+p.row.StoreHash+".narinfo", "")
	if status != http.StatusOK {
		t.Fatalf("narinfo: %d %s", status, body)
	}
	fields := parseNarInfo(t, string(body))
	info, err := NarInfoOf(p.row)
	check(t, err)
	for k, want := range map[string]string{
		"StorePath": p.row.StorePath, "URL": info.URL, "Compression": "zstd",
		"FileHash": p.obj.Expect.FileHash.String(), "NarHash": p.obj.Expect.NarHash.String(),
		"References": dep.row.StoreHash + "-dep " + storeHashOf("app") + "-app",
		"Deriver":    storeHashOf("app.drv") + "-app.drv",
	} {
		if fields[k] != want {
			t.Errorf("%s: %q, want %q", k, fields[k], want)
		}
	}
	if !Verify(r.publicKey(r.pub), info.Fingerprint(), fields["Sig"]) {
		t.Errorf("Sig %q does not verify under the cache's public key", fields["Sig"])
	}
	row, err := r.db.CachedPathByHash(t.Context(), r.pub.ID, p.row.StoreHash)
	check(t, err)
	if len(row.Signatures) != 1 || row.Signatures[0].Signature != fields["Sig"] {
		t.Errorf("recorded signatures %+v, want the served one", row.Signatures)
	}
}

func parseNarInfo(t *testing.T, s string) map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(strings.TrimSuffix(s, "\n"), "\n") {
		k, v, ok := strings.Cut(line, ": ")
		if !ok {
			t.Fatalf("narinfo line %q", line)
		}
		out[k] = v
	}
	return out
}

func TestNarInfoMisses(t *testing.T) {
	r := newRig(t)
	p := r.put("only-private", 100, nil, r.priv)
	for name, url := range map[string]string{
		"another cache's path": "/cache/pub/" + p.row.StoreHash + ".narinfo",
		"unknown hash":         "/cache/pub/" + storeHashOf("nothing") + ".narinfo",
		"not a hash":           "/cache/pub/../etc.narinfo",
		"not a narinfo":        "/cache/pub/" + p.row.StoreHash + ".ls",
	} {
		if status, _, _ := r.get(url, ""); status != http.StatusNotFound {
			t.Errorf("%s: %d, want 404", name, status)
		}
	}
}

func TestNarIsServedAsStored(t *testing.T) {
	r := newRig(t)
	for _, size := range []int{100, 3 * blockSize} { // one block, and several
		p := r.put("nar"+strings.Repeat("x", size%7), size, nil, r.priv)
		info, _ := NarInfoOf(p.row)
		status, body, err := r.get("/cache/priv/"+info.URL, r.pinnedPriv)
		if err != nil || status != http.StatusOK || !bytes.Equal(body, p.obj.Compressed) {
			t.Errorf("size %d: %d, %d bytes, %v; want the %d stored bytes", size, status, len(body), err, len(p.obj.Compressed))
		}
		if status, _, _ := r.get("/cache/priv/"+info.URL, ""); status != http.StatusUnauthorized {
			t.Errorf("anonymous NAR fetch from a private cache: %d", status)
		}
	}
}

// TestCorruptNarIsNeverServedAsGood: a damaged object of one block is answered 404 before
// any byte; a larger one is cut short before its last block. Either way the row is demoted.
func TestCorruptNarIsNeverServedAsGood(t *testing.T) {
	cases := []struct {
		name    string
		size    int
		damage  func(r *rig, p storedPath)
		wantCut bool // the response starts and is cut short
	}{
		{"small, byte flipped", 1000, func(r *rig, p storedPath) { r.corrupt(p, 20) }, false},
		{"large, byte flipped at the end", 12 * blockSize, func(r *rig, p storedPath) { r.corrupt(p, p.row.FileSize-3) }, true},
		{"large, byte flipped at the start", 12 * blockSize, func(r *rig, p storedPath) { r.corrupt(p, 0) }, true},
		{"truncated", 12 * blockSize, func(r *rig, p storedPath) { check(r.t, os.Truncate(r.objectFile(p), 100)) }, false},
		{"missing", 1000, func(r *rig, p storedPath) { check(r.t, os.Remove(r.objectFile(p))) }, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t)
			p := r.put("victim", c.size, nil, r.pub)
			if c.size > blockSize && len(p.obj.Compressed) <= 2*blockSize {
				t.Fatalf("test object compresses to %d bytes: not several blocks", len(p.obj.Compressed))
			}
			info, _ := NarInfoOf(p.row)
			c.damage(r, p)
			status, body, err := r.get("/cache/pub/"+info.URL, "")
			cut := status == http.StatusOK && err != nil && int64(len(body)) < p.row.FileSize
			switch {
			case c.wantCut && !cut:
				t.Errorf("status %d, %d bytes, err %v: want a response cut short", status, len(body), err)
			case !c.wantCut && status != http.StatusNotFound:
				t.Errorf("status %d, %d bytes: want 404", status, len(body))
			}
			if bytes.Equal(body, p.obj.Compressed) {
				t.Errorf("served the whole object")
			}
			if _, err := r.db.CachedPathByHash(t.Context(), r.pub.ID, p.row.StoreHash); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("row not demoted: %v", err)
			}
			if status, _, _ := r.get("/cache/pub/"+p.row.StoreHash+".narinfo", ""); status != http.StatusNotFound {
				t.Errorf("narinfo after the damage: %d, want 404", status)
			}
		})
	}
}

func TestNarInfoOfMissingObjectDemotes(t *testing.T) {
	r := newRig(t)
	p := r.put("gone", 100, nil, r.pub)
	check(t, os.Remove(r.objectFile(p)))
	if status, _, _ := r.get("/cache/pub/"+p.row.StoreHash+".narinfo", ""); status != http.StatusNotFound {
		t.Fatalf("narinfo of a path whose object is gone: %d", status)
	}
	if _, err := r.db.CachedPathByHash(t.Context(), r.pub.ID, p.row.StoreHash); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("row not demoted: %v", err)
	}
}
