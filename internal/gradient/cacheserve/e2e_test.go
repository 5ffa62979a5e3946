package cacheserve

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/buildfleet/buildfleet/internal/gradient/narstore/narstoretest"
	"github.com/buildfleet/buildfleet/internal/gradient/nixhash"
	"github.com/buildfleet/buildfleet/internal/gradient/wire"
	"github.com/buildfleet/buildfleet/internal/gradient/wsconn"
)

// serve runs a /proto endpoint whose sessions skip the handshake (EnterSession at once)
// and hand every message to a cacheserve Session, as the server's worker sessions do.
func (e *env) serve(t testing.TB) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := wsconn.AcceptWorker(w, r, wsconn.Options{})
		if err != nil {
			t.Errorf("accept: %v", err)
			return
		}
		c.EnterSession()
		s := New(Config{Paths: e.db, NARs: e.nars, Send: c.Send, Admission: e.admission, Counters: e.counters,
			Scope:    func() ([]string, []string) { return []string{e.main.ID}, []string{e.main.ID} },
			WorkerID: workerID})
		defer s.Close()
		for {
			m, release, err := c.Read(r.Context())
			if err != nil {
				return
			}
			_, err = s.Handle(r.Context(), m)
			release()
			if err != nil {
				t.Errorf("Handle(%T): %v", m, err)
				return
			}
		}
	}))
	t.Cleanup(srv.Close)
	return "ws" + strings.TrimPrefix(srv.URL, "http") + "/proto"
}

// worker dials the endpoint as a worker whose session is already established.
func worker(t testing.TB, url string) *wsconn.WorkerConn {
	c, err := wsconn.DialServer(context.Background(), url, wsconn.DialOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c.EnterSession()
	t.Cleanup(func() { c.Abort() })
	return c
}

func read[T wire.ServerMessage](t testing.TB, c *wsconn.WorkerConn) T {
	t.Helper()
	m, release, err := c.Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	v, ok := m.(T)
	if !ok {
		t.Fatalf("read %T %+v, want %T", m, m, v)
	}
	return v
}

// addToStore adds a small tree to the Nix store and returns its path, its NAR (nix-store
// --dump) and the NAR hash and size Nix records.
func addToStore(t *testing.T) (string, []byte, string) {
	t.Helper()
	for _, bin := range []string{"nix-store"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Fatalf("%s is not installed (scripts/deps.sh test installs nix-bin): %v", bin, err)
		}
	}
	dir := filepath.Join(t.TempDir(), "cacheserve-e2e")
	check(t, os.MkdirAll(filepath.Join(dir, "bin"), 0o755))
	check(t, os.WriteFile(filepath.Join(dir, "README"), bytes.Repeat([]byte("gradient cache end-to-end test\n"), 40000), 0o644))
	check(t, os.WriteFile(filepath.Join(dir, "bin", "hello"), []byte("#!/bin/sh\necho hello\n"), 0o755))
	check(t, os.Symlink("bin/hello", filepath.Join(dir, "link")))
	noise := make([]byte, 3<<19) // incompressible, so the upload and the pull take several chunks
	_, _ = rand.NewChaCha8([32]byte{1}).Read(noise)
	check(t, os.WriteFile(filepath.Join(dir, "noise.bin"), noise, 0o644))
	run := func(args ...string) []byte {
		out, err := exec.Command("nix-store", args...).Output()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("nix-store %v: %v: %s", args, err, ee.Stderr)
		}
		check(t, err)
		return out
	}
	p := strings.TrimSpace(string(run("--add", dir)))
	return p, run("--dump", p), strings.TrimSpace(string(run("-q", "--hash", p)))
}

// A real NAR from the Nix store goes up over a real socket (zstd level 6, 512 KiB chunks),
// is verified, stored and recorded, and comes back byte for byte through a Pull.
func TestUploadAndPullARealNAROverASocket(t *testing.T) {
	p, nar, nixNarHash := addToStore(t)
	obj := narstoretest.Make(nar)
	if obj.Expect.NarHash.String() != nixNarHash {
		t.Fatalf("NAR hash %s, nix records %s", obj.Expect.NarHash, nixNarHash)
	}
	e := newEnv(t)
	c := worker(t, e.serve(t))
	ctx := context.Background()

	check(t, c.Send(ctx, &wire.CacheQuery{JobID: "build:1", QueryID: "push", Paths: []string{p}, Mode: wire.QueryModePush, NarSizes: []wire.Option[uint64]{wire.Some(uint64(len(nar)))}}))
	if st := read[*wire.CacheStatus](t, c); len(st.Cached) != 1 || st.Cached[0].Cached {
		t.Fatalf("push query: %+v", st)
	}
	check(t, c.Send(ctx, &wire.UploadRequest{JobID: "build:1", RequestID: 1, Object: &wire.UploadObjectNar{StorePath: p}, Size: uint64(len(nar))}))
	if g := read[*wire.UploadGrant](t, c); g.Target.(*wire.GrantTargetPassthrough).ResumeOffset != 0 {
		t.Fatalf("grant %+v", g)
	}
	for off := 0; off < len(obj.Compressed); off += ChunkSize {
		end := min(off+ChunkSize, len(obj.Compressed))
		check(t, c.Send(ctx, &wire.UploadChunk{RequestID: 1, Data: obj.Compressed[off:end], Offset: uint64(off), IsFinal: end == len(obj.Compressed)}))
	}
	meta := metadata(obj)
	meta.NarHash = nixNarHash
	check(t, c.Send(ctx, &wire.UploadFinished{RequestID: 1, Metadata: meta}))
	if o := read[*wire.UploadCommitted](t, c).Outcome; !isOk(o) {
		t.Fatalf("outcome %#v", o)
	}

	check(t, c.Send(ctx, &wire.CacheQuery{JobID: "build:2", QueryID: "pull", Paths: []string{p}, Mode: wire.QueryModePull}))
	st := read[*wire.CacheStatus](t, c)
	if got := st.Cached[0]; !got.Cached || got.FileHash.Value != obj.Expect.FileHash.String() || got.NarHash.Value != nixNarHash || got.FileSize.Value != uint64(len(obj.Compressed)) {
		t.Fatalf("pull answer %+v", got)
	}
	check(t, c.Send(ctx, &wire.NarRequest{JobID: "build:2", Paths: []string{p}}))
	hdr := read[*wire.NarStreamHeader](t, c)
	var got []byte
	for {
		m := read[*wire.NarPush](t, c)
		got = append(got, m.Data...)
		if m.IsFinal {
			break
		}
	}
	if len(obj.Compressed) <= 2*ChunkSize {
		t.Fatalf("the test NAR compresses to %d bytes: not a multi-chunk transfer", len(obj.Compressed))
	}
	if hdr.TotalBytes != uint64(len(got)) || !bytes.Equal(got, obj.Compressed) {
		t.Fatalf("pulled %d bytes (header %d), uploaded %d", len(got), hdr.TotalBytes, len(obj.Compressed))
	}
	dec, err := zstd.NewReader(nil)
	check(t, err)
	defer dec.Close()
	back, err := dec.DecodeAll(got, nil)
	if err != nil || nixhash.Sum(back).String() != nixNarHash {
		t.Fatalf("the pulled NAR does not hash to nix's %s: %v", nixNarHash, err)
	}
}
