package cacheserve

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/clocktest"
	"github.com/buildfleet/buildfleet/internal/gradient/narstore"
	"github.com/buildfleet/buildfleet/internal/gradient/narstore/narstoretest"
	"github.com/buildfleet/buildfleet/internal/gradient/store"
	"github.com/buildfleet/buildfleet/internal/gradient/store/sqlite"
	"github.com/buildfleet/buildfleet/internal/gradient/wire"
)

const workerID = "0193a5c8-7f00-7000-8000-000000000001"

// env is one server's cache state: a real SQLite store, real NAR storage, two caches.
type env struct {
	t         testing.TB
	dir       string
	db        store.Store
	nars      *narstore.Store
	main      store.Cache // the worker's cache
	other     store.Cache // a cache the worker cannot see
	admission *Admission
	counters  *Counters
	clock     *clocktest.Clock
}

func newEnv(t testing.TB, adm ...AdmissionConfig) *env {
	t.Helper()
	dir := t.TempDir()
	db, err := sqlite.Open(filepath.Join(dir, "gradient.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	nars, err := narstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, dir: dir, db: db, nars: nars, counters: new(Counters), clock: clocktest.New(time.Unix(1_700_000_000, 0))}
	for _, c := range []*store.Cache{&e.main, &e.other} {
		name := map[*store.Cache]string{&e.main: "main", &e.other: "other"}[c]
		if *c, err = db.CreateCache(t.Context(), store.NewCache{Name: name}); err != nil {
			t.Fatal(err)
		}
	}
	var ac AdmissionConfig
	if len(adm) > 0 {
		ac = adm[0]
	}
	ac.Now = e.clock.Now
	e.admission = NewAdmission(ac)
	return e
}

func check(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// session opens a worker session scoped to the main cache, recording what it sends.
func (e *env) session(mods ...func(*Config)) (*Session, *recorder) {
	rec := newRecorder()
	cfg := Config{
		Paths: e.db, NARs: e.nars, Send: rec.send,
		Scope:     func() ([]string, []string) { return []string{e.main.ID}, []string{e.main.ID} },
		Admission: e.admission, Counters: e.counters, WorkerID: workerID, Now: e.clock.Now,
	}
	for _, m := range mods {
		m(&cfg)
	}
	s := New(cfg)
	e.t.Cleanup(s.Close)
	return s, rec
}

// lateBookkeeping holds the session a little after each final NarPush is handed over, as a
// loaded machine may: the stream is counted only after its last frame went out, so a test that
// read the counters as soon as it saw that frame would read them too early. Under the race
// detector on a busy machine TestVerifiedStreamDeliversGoodObjects once did; with this it
// would every time, unless the test waits for the session (settled).
func lateBookkeeping(c *Config) {
	send := c.Send
	c.Send = func(ctx context.Context, m wire.ServerMessage) error {
		err := send(ctx, m)
		if p, ok := m.(*wire.NarPush); ok && p.IsFinal {
			time.Sleep(20 * time.Millisecond)
		}
		return err
	}
}

// settled closes the session, which waits for its goroutines: what they counted is final.
func settled(s *Session) { s.Close() }

// handle passes m to the session and fails the test on an error.
func handle(t *testing.T, s *Session, m wire.ClientMessage) {
	t.Helper()
	handled, err := s.Handle(t.Context(), m)
	if err != nil || !handled {
		t.Fatalf("Handle(%T) = %v, %v", m, handled, err)
	}
}

// recorder is a Send that keeps every message, copying chunk bytes as a socket would.
type recorder struct {
	ch chan wire.ServerMessage
}

func newRecorder() *recorder { return &recorder{ch: make(chan wire.ServerMessage, 1<<14)} }

func (r *recorder) send(_ context.Context, m wire.ServerMessage) error {
	if p, ok := m.(*wire.NarPush); ok {
		c := *p
		c.Data = slices.Clone(p.Data)
		m = &c
	}
	r.ch <- m
	return nil
}

// next returns the next message sent, failing the test after 30 s of silence.
func (r *recorder) next(t testing.TB) wire.ServerMessage {
	t.Helper()
	select {
	case m := <-r.ch:
		return m
	case <-time.After(30 * time.Second):
		t.Fatal("no message sent within 30 s")
		return nil
	}
}

// none checks nothing more was sent (synchronous replies only: call after Handle).
func (r *recorder) none(t testing.TB) {
	t.Helper()
	select {
	case m := <-r.ch:
		t.Fatalf("unexpected %T: %+v", m, m)
	default:
	}
}

func next[T wire.ServerMessage](t testing.TB, r *recorder) T {
	t.Helper()
	m := r.next(t)
	v, ok := m.(T)
	if !ok {
		var want T
		t.Fatalf("sent %T %+v, want %T", m, m, want)
	}
	return v
}

var pathCounter int

// storePath makes a valid store path with a fresh hash part.
func storePath(name string) string {
	pathCounter++
	return fmt.Sprintf("/nix/store/%032d-%s", pathCounter, name)
}

// doUpload runs the worker's side of one passthrough upload through Handle and returns the
// UploadCommitted outcome.
func doUpload(t *testing.T, s *Session, rec *recorder, id uint64, path string, obj narstoretest.Object) wire.UploadOutcome {
	t.Helper()
	handle(t, s, &wire.UploadRequest{JobID: "build:1", RequestID: id, Object: &wire.UploadObjectNar{StorePath: path}, Size: uint64(len(obj.NAR))})
	switch m := rec.next(t).(type) {
	case *wire.UploadCommitted:
		return m.Outcome
	case *wire.UploadGrant:
		pass, ok := m.Target.(*wire.GrantTargetPassthrough)
		if !ok {
			t.Fatalf("grant %T, want Passthrough", m.Target)
		}
		sendChunks(t, s, id, obj.Compressed, pass.ResumeOffset)
	default:
		t.Fatalf("answer %T", m)
	}
	handle(t, s, &wire.UploadFinished{RequestID: id, Metadata: metadata(obj)})
	return next[*wire.UploadCommitted](t, rec).Outcome
}

// sendChunks sends b from offset from to its end, the last chunk final.
func sendChunks(t *testing.T, s *Session, id uint64, b []byte, from uint64) {
	t.Helper()
	sendRange(t, s, id, b, from, uint64(len(b)))
}

// sendRange sends b[from:to] as chunks; is_final marks the end of b.
func sendRange(t *testing.T, s *Session, id uint64, b []byte, from, to uint64) {
	t.Helper()
	for off := from; off < to; off += ChunkSize {
		end := min(off+ChunkSize, to)
		handle(t, s, &wire.UploadChunk{RequestID: id, Data: b[off:end], Offset: off, IsFinal: end == uint64(len(b))})
	}
}

func metadata(obj narstoretest.Object) *wire.NarUploadMetadata {
	return &wire.NarUploadMetadata{
		FileHash: obj.Expect.FileHash.String(), FileSize: uint64(obj.Expect.FileSize),
		NarSize: uint64(obj.Expect.NarSize), NarHash: obj.Expect.NarHash.SRI(),
		References: []string{"0iz84xy22rpj9d46qj6dz4sbicjazq3d-dep"}, Deriver: wire.Some("/nix/store/02ka9i0praijlj1j365gbm6gr87vm6w6-x.drv"),
	}
}

// lookup reads a path's row through the given caches.
func (e *env) lookup(p string, caches ...string) (store.CachedPath, bool) {
	rows, err := e.db.LookupCachedPaths(e.t.Context(), caches, []string{p})
	if err != nil {
		e.t.Fatal(err)
	}
	row, ok := rows[p]
	return row, ok
}

// stored puts a committed object and its row, as an earlier upload would have.
func (e *env) stored(p string, obj narstoretest.Object, caches ...string) {
	e.t.Helper()
	hash, err := store.StoreHash(p)
	check(e.t, err)
	st, err := e.nars.Stage("seed/" + hash)
	check(e.t, err)
	check(e.t, st.Write(0, obj.Compressed))
	check(e.t, st.Commit(hash, obj.Expect))
	row := store.CachedPath{StorePath: p, NarHash: obj.Expect.NarHash.String(), NarSize: obj.Expect.NarSize,
		FileHash: obj.Expect.FileHash.Hex(), FileSize: obj.Expect.FileSize,
		References: []string{"0iz84xy22rpj9d46qj6dz4sbicjazq3d-dep"}, Deriver: "/nix/store/02ka9i0praijlj1j365gbm6gr87vm6w6-x.drv"}
	check(e.t, e.db.PutCachedPath(e.t.Context(), row, caches))
}
