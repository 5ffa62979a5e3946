package server

import (
	"bytes"
	"crypto/rand"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/buildfleet/buildfleet/internal/gradient/aeadbox"
	"github.com/buildfleet/buildfleet/internal/gradient/handshake"
	"github.com/buildfleet/buildfleet/internal/gradient/narstore"
	"github.com/buildfleet/buildfleet/internal/gradient/narstore/narstoretest"
	"github.com/buildfleet/buildfleet/internal/gradient/peertoken"
	"github.com/buildfleet/buildfleet/internal/gradient/session"
	"github.com/buildfleet/buildfleet/internal/gradient/store"
	"github.com/buildfleet/buildfleet/internal/gradient/store/sqlite"
	"github.com/buildfleet/buildfleet/internal/gradient/wire"
	"github.com/buildfleet/buildfleet/internal/gradient/wsconn"
)

// cacheRig is an in-process server on a real SQLite store, real NAR storage in a known
// directory and a loopback listener, with a public and a private cache (each with a
// signing key) and an API key pinned to the private one.
type cacheRig struct {
	t         testing.TB
	srv       *Server
	st        store.Store
	narDir    string
	base, key string // http://host:port, the private cache's API key
	pub, priv store.Cache
}

func newCacheRig(t testing.TB, cfg Config) *cacheRig {
	t.Helper()
	dir := t.TempDir()
	st, err := sqlite.Open(sqlite.PathIn(dir))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	nars, err := narstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Secrets, err = aeadbox.New(bytes.Repeat([]byte{5}, 32)); err != nil {
		t.Fatal(err)
	}
	cfg.Store, cfg.NARs = st, nars
	r := &cacheRig{t: t, st: st, srv: New(cfg), narDir: filepath.Join(dir, "nar")}
	hs := httptest.NewServer(r.srv.Handler())
	t.Cleanup(func() { r.srv.Shutdown(ctx); hs.Close() })
	r.base = hs.URL
	r.pub, r.priv = r.makeCache("pub", true), r.makeCache("priv", false)
	key, hash, err := peertoken.MintAPIKey(rand.Reader)
	if err == nil {
		_, err = st.CreateAPIKey(ctx, store.NewAPIKey{Owner: "t", KeyHash: hash, CacheID: r.priv.ID})
	}
	if err != nil {
		t.Fatal(err)
	}
	r.key = key
	return r
}

func (r *cacheRig) makeCache(name string, public bool) store.Cache {
	sealed, _, err := r.srv.cacheFront.keys.Create(name)
	if err != nil {
		r.t.Fatal(err)
	}
	c, err := r.st.CreateCache(ctx, store.NewCache{Name: name, Public: public, SigningKeyEnc: sealed})
	if err != nil {
		r.t.Fatal(err)
	}
	return c
}

// put stores a NAR for a store path and records it in cache c, as an upload would.
func (r *cacheRig) put(name string, c store.Cache, size int) (string, narstoretest.Object) {
	r.t.Helper()
	p := "/nix/store/" + strings.Repeat(string("abcdfghi"[len(name)%8]), 31) + "0-" + name
	obj := narstoretest.Make(narstoretest.NAR(size, uint64(size)))
	hash, _ := store.StoreHash(p)
	st, err := r.srv.cfg.NARs.Stage(p)
	if err == nil {
		if err = st.Write(0, obj.Compressed); err == nil {
			err = st.Commit(hash, obj.Expect)
		}
	}
	if err == nil {
		err = r.st.PutCachedPath(ctx, store.CachedPath{StorePath: p, NarHash: obj.Expect.NarHash.String(),
			NarSize: obj.Expect.NarSize, FileHash: obj.Expect.FileHash.String(), FileSize: obj.Expect.FileSize}, []string{c.ID})
	}
	if err != nil {
		r.t.Fatal(err)
	}
	return p, obj
}

// dialCache opens a cache session; the error is the dial's or the handshake's.
func (r *cacheRig) dialCache(cache, apiKey string) (*peer, error) {
	c, err := r.dialConn(cache, apiKey)
	if err != nil {
		return nil, err
	}
	return &peer{t: r.t.(*testing.T), c: c}, nil
}

// dialConn is dialCache without the test helper wrapper (benchmarks use it).
func (r *cacheRig) dialConn(cache, apiKey string) (*wsconn.WorkerConn, error) {
	h := http.Header{}
	if apiKey != "" {
		h.Set("Authorization", "Bearer "+apiKey)
	}
	url := "ws" + strings.TrimPrefix(r.base, "http") + "/cache/" + cache + "/proto"
	c, err := wsconn.DialServer(ctx, url, wsconn.DialOptions{Header: h})
	if err != nil {
		return nil, err
	}
	r.t.Cleanup(func() { c.Abort() })
	role, out := session.NewPeer(session.PeerConfig{WorkerID: uuid.NewString()})
	res, err := runHandshake(c, role, out)
	if err == nil && (len(res.Authorized) != 0 || !res.Capabilities.Cache || res.Capabilities.Build) {
		r.t.Fatalf("InitAck of a cache session: %+v", res)
	}
	return c, err
}

func runHandshake(c *wsconn.WorkerConn, role session.Peer, out session.Output) (session.Result, error) {
	_, res, err := handshake.Run(ctx, c, role, out, nil)
	return res, err
}

func (r *cacheRig) mustDial(cache, apiKey string) *peer {
	r.t.Helper()
	p, err := r.dialCache(cache, apiKey)
	if err != nil {
		r.t.Fatal(err)
	}
	return p
}

// query sends a CacheQuery and returns its CacheStatus entries by path.
func (p *peer) query(mode wire.QueryMode, paths ...string) map[string]wire.CachedPath {
	p.t.Helper()
	qid := uuid.NewString()
	p.send(&wire.CacheQuery{QueryID: qid, Paths: paths, Mode: mode, NarSizes: make([]wire.Option[uint64], len(paths))})
	for {
		switch m := p.next().(type) {
		case *wire.CacheStatus:
			out := map[string]wire.CachedPath{}
			for _, c := range m.Cached {
				out[c.Path] = c
			}
			return out
		case *wire.CacheError:
			p.t.Fatalf("CacheError: %s", m.Message)
		}
	}
}

// pull requests one NAR and returns the streamed bytes, or the NarUnavailable/NarAbort.
func (p *peer) pull(path string) ([]byte, wire.ServerMessage) {
	p.t.Helper()
	p.send(&wire.NarRequest{JobID: "j", Paths: []string{path}})
	var got []byte
	for {
		m, release, err := p.c.Read(ctx)
		if err != nil {
			p.t.Fatal(err)
		}
		switch m := m.(type) {
		case *wire.NarPush:
			got = append(got, m.Data...)
			if m.IsFinal {
				release()
				return got, nil
			}
		case *wire.NarUnavailable, *wire.NarAbort:
			release()
			return got, m
		}
		release()
	}
}

func TestCacheSessionIsReadOnlyAndScoped(t *testing.T) {
	r := newCacheRig(t, Config{})
	have, obj := r.put("have", r.pub, 3<<20)
	elsewhere, _ := r.put("elsewhere", r.priv, 100)
	missing := "/nix/store/" + strings.Repeat("z", 32) + "-missing"
	p := r.mustDial("pub", "")

	if got := p.query(wire.QueryModeNormal, have, missing, elsewhere); len(got) != 1 || !got[have].Cached {
		t.Fatalf("Normal query: %+v, want only %s", got, have)
	}
	got := p.query(wire.QueryModePull, have, missing, elsewhere)
	if len(got) != 3 || !got[have].Cached || got[missing].Cached || got[elsewhere].Cached {
		t.Fatalf("Pull query: %+v", got)
	}
	if got[have].FileHash.Value != obj.Expect.FileHash.String() || len(got[have].Signatures.Value) != 0 && !strings.HasPrefix(got[have].Signatures.Value[0], "gradient-pub-1:") {
		t.Errorf("Pull entry: %+v", got[have])
	}
	if data, end := p.pull(have); end != nil || !bytes.Equal(data, obj.Compressed) {
		t.Fatalf("NAR pull: %d bytes, end %T; want the %d stored bytes", len(data), end, len(obj.Compressed))
	}
	if _, end := p.pull(elsewhere); end == nil {
		t.Fatalf("a path of another cache was streamed")
	} else if _, ok := end.(*wire.NarUnavailable); !ok {
		t.Errorf("another cache's path: %T, want NarUnavailable", end)
	}

	for _, m := range []wire.ClientMessage{
		&wire.RequestJob{Kind: wire.JobKindBuild},
		&wire.CacheQuery{QueryID: uuid.NewString(), Paths: []string{have}, Mode: wire.QueryModePush, NarSizes: []wire.Option[uint64]{{}}},
		&wire.UploadRequest{JobID: "j", RequestID: 1, Object: &wire.UploadObjectNar{StorePath: have}, Size: 10},
	} {
		p.send(m)
		rej, ok := p.next().(*wire.ServerReject)
		if !ok || rej.Code != 403 {
			t.Fatalf("%T: %+v, want Reject 403", m, rej)
		}
	}
	if got := p.query(wire.QueryModeNormal, have); !got[have].Cached {
		t.Fatalf("the session did not stay open after the refusals")
	}
	if got := r.srv.Counters().CacheMessagesRefused.Load(); got != 3 {
		t.Errorf("refusals counted %d, want 3", got)
	}
}

func TestCacheSessionAccess(t *testing.T) {
	r := newCacheRig(t, Config{})
	for name, c := range map[string]struct {
		cache, key string
		want       int
	}{
		"private, anonymous":                  {"priv", "", http.StatusUnauthorized},
		"unknown, anonymous":                  {"nope", "", http.StatusUnauthorized},
		"public, wrong key":                   {"pub", r.key + "x", http.StatusUnauthorized},
		"public, key pinned to another cache": {"pub", r.key, http.StatusForbidden},
	} {
		req, _ := http.NewRequest(http.MethodGet, r.base+"/cache/"+c.cache+"/proto", nil)
		if c.key != "" {
			req.Header.Set("Authorization", c.key)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("%s: %d, want %d (before any upgrade)", name, resp.StatusCode, c.want)
		}
	}
	if _, err := r.dialCache("priv", ""); err == nil || !strings.Contains(err.Error(), "401") {
		t.Errorf("private cache session without a key: %v, want a 401 upgrade refusal", err)
	}
	p := r.mustDial("priv", r.key)
	if got := p.query(wire.QueryModeNormal, "/nix/store/"+strings.Repeat("z", 32)+"-x"); len(got) != 0 {
		t.Errorf("query on the private cache: %+v", got)
	}
}

func TestAnonymousCacheSessionsAreDeniedWhenTurnedOff(t *testing.T) {
	r := newCacheRig(t, Config{DenyAnonymousCache: true})
	if _, err := r.dialCache("pub", ""); err == nil || !strings.Contains(err.Error(), "401") {
		t.Errorf("anonymous session with --anonymous-cache=false: %v, want 401", err)
	}
}

// gradient-protocol §7.1: 32 anonymous sessions per IP; the 33rd is refused 503 before
// the upgrade, while a keyed session from the same IP still gets in, and a freed slot is
// reusable.
func TestThirtyThirdAnonymousSessionFromOneIPIsRefused(t *testing.T) {
	r := newCacheRig(t, Config{})
	var open []*peer
	for range MaxAnonymousCacheSessionsPerIP {
		open = append(open, r.mustDial("pub", ""))
	}
	if _, err := r.dialCache("pub", ""); err == nil || !strings.Contains(err.Error(), "503") {
		t.Fatalf("33rd anonymous session: %v, want 503", err)
	}
	if got := r.srv.Counters().CacheSessionsRefusedIP.Load(); got != 1 {
		t.Errorf("per-IP refusals counted %d, want 1", got)
	}
	r.mustDial("priv", r.key)
	open[0].c.Close(ctx)
	eventually(t, "a freed anonymous slot", func() bool {
		_, err := r.dialCache("pub", "")
		return err == nil
	})
}

func TestEveryCacheSessionTakesAConnectionSlot(t *testing.T) {
	r := newCacheRig(t, Config{MaxConnections: 2})
	r.mustDial("pub", "")
	r.mustDial("priv", r.key)
	if _, err := r.dialCache("priv", r.key); err == nil || !strings.Contains(err.Error(), "503") {
		t.Fatalf("a session past proto.maxConnections: %v, want 503", err)
	}
}

func TestIdleCacheSessionIsClosed(t *testing.T) {
	r := newCacheRig(t, Config{CacheSessionIdle: 200 * time.Millisecond})
	p := r.mustDial("pub", "")
	if _, err := p.read(30 * time.Second); err == nil {
		t.Fatalf("an idle session sent a message")
	}
	select {
	case <-p.c.Done():
	case <-time.After(30 * time.Second):
		t.Fatalf("the idle session was not closed")
	}
}

// A NAR damaged on disk is answered NarUnavailable (size differs) or NarAbort (same size,
// other bytes), never streamed to its end.
func TestCorruptNarOnACacheSession(t *testing.T) {
	r := newCacheRig(t, Config{})
	truncated, _ := r.put("truncated", r.pub, 1<<20)
	flipped, obj := r.put("flipped", r.pub, 6<<20)
	object := func(p string) string {
		h, _ := store.StoreHash(p)
		return filepath.Join(r.narDir, h+".nar.zst")
	}
	if err := os.Truncate(object(truncated), 10); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(object(flipped), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteAt([]byte{obj.Compressed[len(obj.Compressed)/2] ^ 0xff}, int64(len(obj.Compressed)/2))
	f.Close()
	p := r.mustDial("pub", "")
	for _, path := range []string{truncated, flipped} {
		if _, end := p.pull(path); end == nil {
			t.Errorf("%s: a damaged object was streamed to its end", path)
		}
	}
}

// gradient-protocol §7.1: 2 MiB per inbound message on a cache session; a bigger one ends
// the session (close 1009) undecoded.
func TestCacheSessionMessageCap(t *testing.T) {
	r := newCacheRig(t, Config{})
	p := r.mustDial("pub", "")
	huge := "/nix/store/" + strings.Repeat("a", 32) + "-" + strings.Repeat("x", wire.SafeInflightMessageSize)
	p.send(&wire.CacheQuery{QueryID: uuid.NewString(), Paths: []string{huge}, Mode: wire.QueryModeNormal, NarSizes: []wire.Option[uint64]{{}}})
	if m, err := p.read(30 * time.Second); err == nil {
		t.Fatalf("a message over 2 MiB was answered: %T", m)
	}
}
