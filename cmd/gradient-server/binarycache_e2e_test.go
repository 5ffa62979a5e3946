package main

import (
	"bytes"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/buildfleet/buildfleet/internal/gradient/api"
	"github.com/buildfleet/buildfleet/internal/gradient/handshake"
	"github.com/buildfleet/buildfleet/internal/gradient/session"
	"github.com/buildfleet/buildfleet/internal/gradient/store"
	"github.com/buildfleet/buildfleet/internal/gradient/wire"
	"github.com/buildfleet/buildfleet/internal/gradient/wsconn"
)

// TestNixSubstitutesFromTheServer runs the cache cases against real processes: a
// worker builds the test flake and uploads its outputs, then plain Nix copies them from the
// server's HTTP binary cache into a fresh store (verified under the cache's public key,
// refused under another), a read-only cache session queries and pulls them, and a NAR
// damaged on disk is never handed out as good.
func TestNixSubstitutesFromTheServer(t *testing.T) {
	f := newFleet(t)
	worker := f.startWorker()
	defer worker.stop()
	d := f.completed(t, f.evaluate(t), 5*time.Minute)
	out := storeLines(t, "nix-store", "-q", "--outputs", buildNamed(t, d, "c").DrvPath)[0]
	cache, err := f.api.Cache(bg, "main")
	if err != nil || !strings.HasPrefix(cache.PublicKey, "gradient-main-1:") {
		t.Fatalf("cache main: %+v, %v; want a public key named gradient-main-1", cache, err)
	}
	pinned, err := f.api.CreateAPIKey(bg, api.CreateAPIKeyRequest{Owner: "nix", Cache: "main"})
	if err != nil {
		t.Fatal(err)
	}
	netrc := "machine 127.0.0.1 login nix password " + pinned.Key + "\n"
	cacheURL := "http://" + f.srv.addr + "/cache/main"

	t.Run("nix copy --from the cache with its key: valid in a fresh store", func(t *testing.T) {
		if log, ok := nixCopyFrom(t, cacheURL, cache.PublicKey, netrc, out); !ok {
			t.Fatalf("nix copy:\n%s", log)
		}
	})
	t.Run("nix copy with another trusted key: refused", func(t *testing.T) {
		other := "gradient-main-1:" + strings.Repeat("A", 43) + "="
		if log, ok := nixCopyFrom(t, cacheURL, other, netrc, out); ok || !strings.Contains(log, "signature") {
			t.Fatalf("copied under a key that did not sign (ok=%v):\n%s", ok, log)
		}
	})
	t.Run("the private cache without the API key: 401", func(t *testing.T) {
		resp, err := http.Get(cacheURL + "/nix-cache-info")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("anonymous nix-cache-info of a private cache: %d", resp.StatusCode)
		}
	})
	t.Run("a cache session queries and pulls, refuses RequestJob and stays open", func(t *testing.T) {
		c := dialCacheSession(t, f.srv.addr, "main", pinned.Key)
		defer c.Close(bg)
		if st := pullQuery(t, c, []string{out}); !st[out].Cached || len(st[out].Signatures.Value) != 1 {
			t.Fatalf("Pull query: %+v (the narinfo fetch recorded one signature)", st[out])
		}
		dump, _ := exec.Command("nix-store", "--dump", out).Output()
		if nar := pullNAR(t, c, out); !bytes.Equal(nar, dump) {
			t.Fatalf("pulled NAR differs from nix-store --dump")
		}
		if err := c.Send(bg, &wire.RequestJob{Kind: wire.JobKindBuild}); err != nil {
			t.Fatal(err)
		}
		if rej, ok := read(t, c).(*wire.ServerReject); !ok || rej.Code != 403 {
			t.Fatalf("RequestJob: %+v, want Reject 403", rej)
		}
		if st := pullQuery(t, c, []string{out}); !st[out].Cached {
			t.Fatalf("after the refusal: %+v", st[out])
		}
	})
	t.Run("33 anonymous sessions on a public cache: the 33rd is refused 503", func(t *testing.T) {
		if _, err := f.api.CreateCache(bg, api.CreateCacheRequest{Name: "open", Public: true}); err != nil {
			t.Fatal(err)
		}
		for range 32 {
			c := dialCacheSession(t, f.srv.addr, "open", "")
			defer c.Close(bg)
		}
		url := "ws://" + f.srv.addr + "/cache/open/proto"
		if _, err := wsconn.DialServer(bg, url, wsconn.DialOptions{}); err == nil || !strings.Contains(err.Error(), "503") {
			t.Fatalf("33rd anonymous session: %v, want 503", err)
		}
	})
	t.Run("a NAR damaged on disk is never served as good", func(t *testing.T) {
		hash, _ := store.StoreHash(out)
		object := filepath.Join(f.srv.dataDir, "nar", hash+".nar.zst")
		b, err := os.ReadFile(object)
		if err != nil {
			t.Fatal(err)
		}
		b[len(b)/2] ^= 0xff
		if err := os.WriteFile(object, b, 0o600); err != nil {
			t.Fatal(err)
		}
		// Nix first (the HTTP cache finds the damage while serving and demotes the row),
		// then a cache session (which must not stream it either).
		if log, ok := nixCopyFrom(t, cacheURL, cache.PublicKey, netrc, out); ok {
			t.Fatalf("nix copied a damaged NAR:\n%s", log)
		}
		c := dialCacheSession(t, f.srv.addr, "main", pinned.Key)
		defer c.Close(bg)
		if err := c.Send(bg, &wire.NarRequest{JobID: "inspect", Paths: []string{out}}); err != nil {
			t.Fatal(err)
		}
		for done := false; !done; {
			switch m := read(t, c).(type) {
			case *wire.NarPush:
				if m.IsFinal {
					t.Fatalf("the damaged NAR was streamed to its end")
				}
			case *wire.NarAbort, *wire.NarUnavailable:
				done = true
			}
		}
	})
}

// dialCacheSession opens a /cache/{cache}/proto session, with a Bearer key unless key is "".
func dialCacheSession(t *testing.T, addr, cache, key string) *wsconn.WorkerConn {
	t.Helper()
	h := http.Header{}
	if key != "" {
		h.Set("Authorization", "Bearer "+key)
	}
	c, err := wsconn.DialServer(bg, "ws://"+addr+"/cache/"+cache+"/proto", wsconn.DialOptions{Header: h})
	if err != nil {
		t.Fatal(err)
	}
	role, init := session.NewPeer(session.PeerConfig{WorkerID: uuid.NewString()})
	if _, _, err := handshake.Run(bg, c, role, init, nil); err != nil {
		t.Fatalf("cache session handshake: %v", err)
	}
	return c
}

// nixCopyFrom runs `nix copy --from url` into a fresh store and reports the log and
// whether the path is then valid there.
func nixCopyFrom(t *testing.T, url, trustedKey, netrc, path string) (string, bool) {
	t.Helper()
	dir := t.TempDir()
	dest, netrcFile := filepath.Join(dir, "store"), filepath.Join(dir, "netrc")
	if err := os.WriteFile(netrcFile, []byte(netrc), 0o600); err != nil {
		t.Fatal(err)
	}
	nix := func(args ...string) *exec.Cmd {
		cmd := exec.Command("nix", append([]string{"--extra-experimental-features", "nix-command"}, args...)...)
		cmd.Env = append(os.Environ(), "HOME="+dir, "XDG_CACHE_HOME="+filepath.Join(dir, "cache"))
		return cmd
	}
	log, _ := nix("copy", "--from", url, "--store", dest, "--option", "trusted-public-keys", trustedKey,
		"--option", "substituters", "", "--option", "netrc-file", netrcFile, path).CombinedOutput()
	return string(log), nix("path-info", "--store", dest, path).Run() == nil
}
