package upstream

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/buildfleet/buildfleet/internal/gradient/binarycache"
	"github.com/buildfleet/buildfleet/internal/gradient/store"
)

const testCache = "0190a000-0000-7000-8000-0000000000c1"

// signedNarInfo is goodNarInfo signed by key.
func signedNarInfo(t *testing.T, key binarycache.SigningKey) string {
	t.Helper()
	text := strings.Replace(goodNarInfo(), "Sig: up-1:AAAA\n", "", 1)
	n, err := ParseNarInfo([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	fp, err := binarycache.Fingerprint(n.StorePath, n.NarHash, n.NarSize, n.References)
	if err != nil {
		t.Fatal(err)
	}
	return text + "Sig: " + key.Sign(fp) + "\n"
}

func serveNarInfo(t *testing.T, body string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/0mdqa9w1p6cmli6976v4wi0sw9r4p5pr.narinfo" {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return srv
}

func lister(ups ...store.CacheUpstream) Lister {
	return func(_ context.Context, ids []string) ([]store.CacheUpstream, error) {
		if len(ids) != 1 || ids[0] != testCache {
			return nil, nil
		}
		return ups, nil
	}
}

func TestResolverFindsOnlyWhatTheTrustedKeySigned(t *testing.T) {
	trusted, forger := mustKey(t, "up-1"), mustKey(t, "up-1")
	forged := serveNarInfo(t, signedNarInfo(t, forger))
	good := serveNarInfo(t, signedNarInfo(t, trusted))
	empty := serveNarInfo(t, "")
	r := NewResolver(lister(
		store.CacheUpstream{URL: empty.URL, PublicKey: trusted.PublicKey()},
		store.CacheUpstream{URL: forged.URL, PublicKey: trusted.PublicKey()},
		store.CacheUpstream{URL: good.URL + "/", PublicKey: trusted.PublicKey()},
	), nil, nil)
	f, ok, err := r.Find(t.Context(), []string{testCache}, testPath)
	if err != nil || !ok {
		t.Fatalf("Find = %v, %v", ok, err)
	}
	if f.Upstream != good.URL || f.NarURL != good.URL+"/nar/1abc.nar.xz" || len(f.Sigs) != 1 {
		t.Fatalf("found %+v", f)
	}
	c := f.CachedPath()
	if u, _ := c.URL.Get(); !c.Cached || u != f.NarURL {
		t.Fatalf("CachedPath %+v", c)
	}
	if d, _ := c.Deriver.Get(); d != "/nix/store/0iz84xy22rpj9d46qj6dz4sbicjazq3d-dep.drv" {
		t.Fatalf("deriver %q", d)
	}
	if refs, _ := c.References.Get(); len(refs) != 1 || refs[0] != "/nix/store/"+testRef {
		t.Fatalf("references %v", refs)
	}

	r = NewResolver(lister(store.CacheUpstream{URL: forged.URL, PublicKey: trusted.PublicKey()}), nil, nil)
	if _, ok, err := r.Find(t.Context(), []string{testCache}, testPath); ok || err != nil {
		t.Fatalf("a narinfo signed by an untrusted key was found: %v, %v", ok, err)
	}
	if _, ok, _ := r.Find(t.Context(), []string{"other"}, testPath); ok {
		t.Fatal("another cache's upstream answered")
	}
}

func TestResolverReadsFileUpstreams(t *testing.T) {
	key := mustKey(t, "up-1")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "0mdqa9w1p6cmli6976v4wi0sw9r4p5pr.narinfo"), []byte(signedNarInfo(t, key)), 0o644); err != nil {
		t.Fatal(err)
	}
	r := NewResolver(lister(store.CacheUpstream{URL: "file://" + dir, PublicKey: key.PublicKey()}), nil, nil)
	f, ok, err := r.Find(t.Context(), []string{testCache}, testPath)
	if err != nil || !ok || f.NarURL != "file://"+dir+"/nar/1abc.nar.xz" {
		t.Fatalf("Find = %+v, %v, %v", f, ok, err)
	}
	if _, ok, _ := r.Find(t.Context(), []string{testCache}, "/nix/store/0iz84xy22rpj9d46qj6dz4sbicjazq3d-other"); ok {
		t.Fatal("found a path the upstream lacks")
	}
}

func TestResolverRefusesASchemeChange(t *testing.T) {
	if _, err := resolveNarURL("http://up.example", "file:///etc/passwd"); !errors.Is(err, ErrBadNarInfo) {
		t.Fatalf("resolveNarURL to file from http: %v", err)
	}
	if got, err := resolveNarURL("http://up.example/sub", "nar/x.nar"); err != nil || got != "http://up.example/sub/nar/x.nar" {
		t.Fatalf("resolveNarURL = %q, %v", got, err)
	}
}

func TestResolverReportsAStateFailure(t *testing.T) {
	boom := errors.New("db down")
	r := NewResolver(func(context.Context, []string) ([]store.CacheUpstream, error) { return nil, boom }, nil, nil)
	if _, _, err := r.Find(t.Context(), []string{testCache}, testPath); !errors.Is(err, boom) {
		t.Fatalf("Find = %v, want the state's error", err)
	}
}
