package cacheserve

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/klauspost/compress/zstd"

	"github.com/buildfleet/buildfleet/internal/gradient/narstore/narstoretest"
	"github.com/buildfleet/buildfleet/internal/gradient/store"
	"github.com/buildfleet/buildfleet/internal/gradient/wire"
)

func isOk(o wire.UploadOutcome) bool { _, ok := o.(*wire.UploadOutcomeOk); return ok }

func (e *env) object(p string) ([]byte, bool) {
	hash, _ := store.StoreHash(p)
	r, _, err := e.nars.Open(hash)
	if err != nil {
		return nil, false
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	check(e.t, err)
	return b, true
}

func (e *env) partials() []string {
	entries, err := os.ReadDir(filepath.Join(e.dir, "nar-partial"))
	check(e.t, err)
	var names []string
	for _, en := range entries {
		names = append(names, en.Name())
	}
	return names
}

func (e *env) admissionIdle(t *testing.T) {
	t.Helper()
	if l, s, b := e.admission.Usage(); l+s != 0 || b != 0 {
		t.Errorf("admission still holds %d large, %d small, %d bytes", l, s, b)
	}
}

// gradient-protocol §7.3: the bytes are verified and stored, and only then is the path
// recorded, in the session's push caches, with its hashes as sha256:nix32.
func TestUploadIsVerifiedStoredThenRecorded(t *testing.T) {
	e := newEnv(t)
	s, rec := e.session()
	p := storePath("out")
	obj := narstoretest.Make(narstoretest.NAR(3<<20, 7))
	if o := doUpload(t, s, rec, 1, p, obj); !isOk(o) {
		t.Fatalf("outcome %#v", o)
	}
	if got, ok := e.object(p); !ok || !bytes.Equal(got, obj.Compressed) {
		t.Fatal("the stored object is not the uploaded bytes")
	}
	row, ok := e.lookup(p, e.main.ID)
	want := store.CachedPath{StorePath: p, StoreHash: row.StoreHash, NarHash: obj.Expect.NarHash.String(), NarSize: obj.Expect.NarSize,
		FileHash: obj.Expect.FileHash.String(), FileSize: obj.Expect.FileSize, References: []string{"0iz84xy22rpj9d46qj6dz4sbicjazq3d-dep"},
		Deriver: "/nix/store/02ka9i0praijlj1j365gbm6gr87vm6w6-x.drv", CreatedAt: row.CreatedAt}
	if diff := cmp.Diff(want, row); !ok || diff != "" {
		t.Errorf("row (-want +got):\n%s", diff)
	}
	if _, ok := e.lookup(p, e.other.ID); ok {
		t.Error("the path is visible in a cache the worker cannot push to")
	}
	if len(e.partials()) != 0 {
		t.Errorf("partials left: %v", e.partials())
	}
	e.admissionIdle(t)
	if e.counters.Committed.Load() != 1 || e.counters.UploadBytes.Load() != uint64(len(obj.Compressed)) {
		t.Errorf("counters: committed %d, bytes %d", e.counters.Committed.Load(), e.counters.UploadBytes.Load())
	}
}

// The answers an UploadRequest gets before any byte moves.
func TestUploadRequestAnswers(t *testing.T) {
	e := newEnv(t)
	obj := narstoretest.Make(narstoretest.NAR(1000, 1))
	mine, theirs := storePath("mine"), storePath("theirs")
	e.stored(mine, obj, e.main.ID)
	e.stored(theirs, obj, e.other.ID)
	nar := func(p string, size uint64) *wire.UploadRequest {
		return &wire.UploadRequest{RequestID: 9, Object: &wire.UploadObjectNar{StorePath: p}, Size: size}
	}
	cases := []struct {
		name  string
		scope []string
		req   *wire.UploadRequest
		want  wire.ServerMessage
	}{
		{"stored in a push cache: Skip", nil, nar(mine, 1000), &wire.UploadGrant{RequestID: 9, Target: &wire.GrantTargetSkip{}}},
		{"stored only in another cache: upload", nil, nar(theirs, 1000), &wire.UploadGrant{RequestID: 9, Target: &wire.GrantTargetPassthrough{}}},
		{"eval-cache blob: Skip", nil, &wire.UploadRequest{RequestID: 9, Object: &wire.UploadObjectEvalCache{Fingerprint: "f"}}, &wire.UploadGrant{RequestID: 9, Target: &wire.GrantTargetSkip{}}},
		{"not a store path", nil, nar("/nix/store/short-x", 10), committed(9, &wire.UploadOutcomeRejected{Reason: "not a store path"})},
		{"no cache to push to", []string{}, nar(storePath("a"), 10), committed(9, &wire.UploadOutcomeRejected{Reason: "this session may push to no cache"})},
		{"over the size limit", nil, nar(storePath("b"), 1<<40), committed(9, &wire.UploadOutcomeRejected{Reason: "1099511627776 bytes is over the cache's limit"})},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, rec := e.session(func(cfg *Config) {
				if c.scope != nil {
					cfg.Scope = func() ([]string, []string) { return c.scope, c.scope }
				}
			})
			handle(t, s, c.req)
			if diff := cmp.Diff(c.want, rec.next(t)); diff != "" {
				t.Errorf("answer (-want +got):\n%s", diff)
			}
			s.Close()
			e.admissionIdle(t)
		})
	}
}

// Every failed verification is Rejected with its reason counted, and leaves no object, no
// row, no partial and no admission behind.
func TestRefusedUploadsLeaveNothing(t *testing.T) {
	obj := narstoretest.Make(narstoretest.NAR(2<<20, 3))
	bombNAR := append(append([]byte(nil), obj.NAR[:24]...), make([]byte, 16<<20)...)
	bomb := narstoretest.ExpectOf(bombNAR, narstoretest.Compress(bombNAR))
	cases := []struct {
		name    string
		bytes   []byte
		meta    func(*wire.NarUploadMetadata)
		counter func(*Counters) uint64
	}{
		{"wrong file hash", obj.Compressed, func(m *wire.NarUploadMetadata) { m.FileHash = obj.Expect.NarHash.String() },
			func(c *Counters) uint64 { return c.RejectedFileHash.Load() }},
		{"wrong file size", obj.Compressed, func(m *wire.NarUploadMetadata) { m.FileSize-- },
			func(c *Counters) uint64 { return c.RejectedFileSize.Load() }},
		{"wrong NAR hash", obj.Compressed, func(m *wire.NarUploadMetadata) { m.NarHash = obj.Expect.FileHash.String() },
			func(c *Counters) uint64 { return c.RejectedNarHash.Load() }},
		{"wrong NAR size", obj.Compressed, func(m *wire.NarUploadMetadata) { m.NarSize += 8 },
			func(c *Counters) uint64 { return c.RejectedNarSize.Load() }},
		{"decompression bomb declared small", narstoretest.Compress(bombNAR), func(m *wire.NarUploadMetadata) {
			m.FileHash, m.FileSize, m.NarHash, m.NarSize = bomb.FileHash.String(), uint64(bomb.FileSize), bomb.NarHash.String(), 1<<20
		}, func(c *Counters) uint64 { return c.RejectedNarSize.Load() }},
		{"unreadable hash", obj.Compressed, func(m *wire.NarUploadMetadata) { m.NarHash = "md5:abc" },
			func(c *Counters) uint64 { return c.RejectedInvalid.Load() }},
		{"bad reference", obj.Compressed, func(m *wire.NarUploadMetadata) { m.References = []string{"../../x"} },
			func(c *Counters) uint64 { return c.RejectedInvalid.Load() }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			s, rec := e.session()
			p := storePath("bad")
			handle(t, s, &wire.UploadRequest{RequestID: 1, Object: &wire.UploadObjectNar{StorePath: p}, Size: uint64(len(obj.NAR))})
			next[*wire.UploadGrant](t, rec)
			sendChunks(t, s, 1, c.bytes, 0)
			meta := metadata(obj)
			c.meta(meta)
			handle(t, s, &wire.UploadFinished{RequestID: 1, Metadata: meta})
			if o, ok := next[*wire.UploadCommitted](t, rec).Outcome.(*wire.UploadOutcomeRejected); !ok {
				t.Fatalf("outcome %#v, want Rejected", o)
			}
			if c.counter(e.counters) != 1 {
				t.Error("the refusal was not counted under its reason")
			}
			if _, ok := e.object(p); ok {
				t.Error("object stored")
			}
			if _, ok := e.lookup(p, e.main.ID); ok {
				t.Error("row recorded")
			}
			if p := e.partials(); len(p) != 0 && c.name != "unreadable hash" && c.name != "bad reference" {
				t.Errorf("partial kept: %v", p)
			}
			e.admissionIdle(t)
		})
	}
}

// A canceled upload keeps its partial; the retry (a new request id, even on a new session
// after a reconnect) resumes from it.
func TestUploadResumesAfterCancelAndReconnect(t *testing.T) {
	e := newEnv(t)
	obj := narstoretest.Make(narstoretest.NAR(6<<20, 5))
	p := storePath("big")
	s1, rec1 := e.session()
	req := func(id uint64) *wire.UploadRequest {
		return &wire.UploadRequest{RequestID: id, Object: &wire.UploadObjectNar{StorePath: p}, Size: uint64(len(obj.NAR))}
	}
	handle(t, s1, req(1))
	next[*wire.UploadGrant](t, rec1)
	third := uint64(len(obj.Compressed) / 3)
	sendRange(t, s1, 1, obj.Compressed, 0, third)
	handle(t, s1, &wire.UploadCancel{RequestID: 1})
	handle(t, s1, req(2))
	g := next[*wire.UploadGrant](t, rec1)
	if diff := cmp.Diff(&wire.GrantTargetPassthrough{ResumeOffset: third}, g.Target); diff != "" {
		t.Fatalf("grant after cancel (-want +got):\n%s", diff)
	}
	sendRange(t, s1, 2, obj.Compressed, third, 2*third)
	s1.Close() // the connection drops mid-upload
	e.admissionIdle(t)

	s2, rec2 := e.session()
	handle(t, s2, req(1))
	if diff := cmp.Diff(&wire.GrantTargetPassthrough{ResumeOffset: 2 * third}, next[*wire.UploadGrant](t, rec2).Target); diff != "" {
		t.Fatalf("grant after reconnect (-want +got):\n%s", diff)
	}
	sendChunks(t, s2, 1, obj.Compressed, 2*third)
	handle(t, s2, &wire.UploadFinished{RequestID: 1, Metadata: metadata(obj)})
	if o := next[*wire.UploadCommitted](t, rec2).Outcome; !isOk(o) {
		t.Fatalf("resumed upload: %#v", o)
	}
	if got, _ := e.object(p); !bytes.Equal(got, obj.Compressed) {
		t.Fatal("resumed object differs")
	}
	if e.counters.UploadsResumed.Load() != 2 || e.counters.Canceled.Load() != 1 {
		t.Errorf("resumed %d, canceled %d", e.counters.UploadsResumed.Load(), e.counters.Canceled.Load())
	}
}

// A resumed upload whose old bytes came from another compression fails the file hash: it
// is retried (the partial is gone), and the retry from 0 commits.
func TestResumedMismatchIsRetriedFromZero(t *testing.T) {
	e := newEnv(t)
	nar := narstoretest.NAR(2<<20, 6)
	obj := narstoretest.Make(nar)
	stale := narstoretest.Compress(nar, zstd.WithEncoderLevel(zstd.SpeedFastest))
	p := storePath("x")
	s, rec := e.session()
	handle(t, s, &wire.UploadRequest{RequestID: 1, Object: &wire.UploadObjectNar{StorePath: p}, Size: uint64(len(nar))})
	next[*wire.UploadGrant](t, rec)
	sendRange(t, s, 1, stale, 0, ChunkSize)
	handle(t, s, &wire.UploadCancel{RequestID: 1})

	if o, ok := doUpload(t, s, rec, 2, p, obj).(*wire.UploadOutcomeRetry); !ok || e.counters.RetryResumeMismatch.Load() != 1 {
		t.Fatalf("outcome %#v, want Retry (resume mismatch)", o)
	}
	handle(t, s, &wire.UploadRequest{RequestID: 3, Object: &wire.UploadObjectNar{StorePath: p}, Size: uint64(len(nar))})
	if g := next[*wire.UploadGrant](t, rec); g.Target.(*wire.GrantTargetPassthrough).ResumeOffset != 0 {
		t.Fatalf("the retry resumes at %d", g.Target.(*wire.GrantTargetPassthrough).ResumeOffset)
	}
	sendChunks(t, s, 3, obj.Compressed, 0)
	handle(t, s, &wire.UploadFinished{RequestID: 3, Metadata: metadata(obj)})
	if o := next[*wire.UploadCommitted](t, rec).Outcome; !isOk(o) {
		t.Fatalf("retry from 0: %#v", o)
	}
}

// Transfer failures are answered once, at UploadFinished; chunks after them are dropped.
func TestTransferFailuresAreAnsweredAtFinish(t *testing.T) {
	obj := narstoretest.Make(narstoretest.NAR(2<<20, 8))
	cases := []struct {
		name     string
		chunks   func(*testing.T, *Session)
		want     wire.UploadOutcome
		partials int
	}{
		{"a gap between chunks", func(t *testing.T, s *Session) {
			handle(t, s, &wire.UploadChunk{RequestID: 1, Data: obj.Compressed[:100], Offset: 0})
			handle(t, s, &wire.UploadChunk{RequestID: 1, Data: obj.Compressed[200:300], Offset: 200})
			handle(t, s, &wire.UploadChunk{RequestID: 1, Data: obj.Compressed[100:200], Offset: 100})
		}, &wire.UploadOutcomeRetry{Reason: "chunk at offset 200, the staged bytes end at 100"}, 1},
		{"more bytes than the size allows", func(t *testing.T, s *Session) {
			handle(t, s, &wire.UploadChunk{RequestID: 1, Data: make([]byte, 100), Offset: uint64(compressBound(uint64(len(obj.NAR))))})
		}, &wire.UploadOutcomeRejected{Reason: "more bytes than the declared size allows"}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			s, rec := e.session()
			handle(t, s, &wire.UploadRequest{RequestID: 1, Object: &wire.UploadObjectNar{StorePath: storePath("x")}, Size: uint64(len(obj.NAR))})
			next[*wire.UploadGrant](t, rec)
			c.chunks(t, s)
			rec.none(t)
			e.admissionIdle(t)
			handle(t, s, &wire.UploadFinished{RequestID: 1, Metadata: metadata(obj)})
			if diff := cmp.Diff(c.want, next[*wire.UploadCommitted](t, rec).Outcome); diff != "" {
				t.Errorf("outcome (-want +got):\n%s", diff)
			}
			if got := len(e.partials()); got != c.partials {
				t.Errorf("%d partials, want %d", got, c.partials)
			}
		})
	}
}

func TestUnknownRequestsAreRetriedOrDropped(t *testing.T) {
	e := newEnv(t)
	s, rec := e.session()
	handle(t, s, &wire.UploadChunk{RequestID: 77, Data: []byte("x")})
	handle(t, s, &wire.UploadCancel{RequestID: 77})
	rec.none(t)
	handle(t, s, &wire.UploadFinished{RequestID: 77, Metadata: &wire.NarUploadMetadata{}})
	if _, ok := next[*wire.UploadCommitted](t, rec).Outcome.(*wire.UploadOutcomeRetry); !ok {
		t.Error("an unknown UploadFinished is not answered Retry")
	}
	if e.counters.ChunksDropped.Load() != 1 || e.counters.RetryUnknown.Load() != 1 {
		t.Errorf("dropped %d, unknown %d", e.counters.ChunksDropped.Load(), e.counters.RetryUnknown.Load())
	}
}

// gradient-protocol §7.3: an upload of a path another upload holds is coalesced (Skip);
// once that one is committed, the path is stored (Skip as well).
func TestConcurrentUploadsOfOnePathAreCoalesced(t *testing.T) {
	e := newEnv(t)
	obj := narstoretest.Make(narstoretest.NAR(2<<20, 9))
	p := storePath("shared")
	a, recA := e.session()
	b, recB := e.session(func(c *Config) { c.WorkerID = "other-worker" })
	req := &wire.UploadRequest{RequestID: 1, Object: &wire.UploadObjectNar{StorePath: p}, Size: uint64(len(obj.NAR))}
	handle(t, a, req)
	next[*wire.UploadGrant](t, recA)
	handle(t, b, req)
	skip := &wire.UploadGrant{RequestID: 1, Target: &wire.GrantTargetSkip{}}
	if diff := cmp.Diff(skip, recB.next(t)); diff != "" {
		t.Fatalf("second uploader (-want +got):\n%s", diff)
	}
	sendChunks(t, a, 1, obj.Compressed, 0)
	handle(t, a, &wire.UploadFinished{RequestID: 1, Metadata: metadata(obj)})
	if !isOk(next[*wire.UploadCommitted](t, recA).Outcome) {
		t.Fatal("first upload failed")
	}
	handle(t, b, &wire.UploadRequest{RequestID: 2, Object: &wire.UploadObjectNar{StorePath: p}, Size: uint64(len(obj.NAR))})
	if diff := cmp.Diff(&wire.UploadGrant{RequestID: 2, Target: &wire.GrantTargetSkip{}}, recB.next(t)); diff != "" {
		t.Fatalf("after the commit (-want +got):\n%s", diff)
	}
	if e.counters.SkippedInProgress.Load() != 1 || e.counters.SkippedStored.Load() != 1 {
		t.Errorf("skips: in progress %d, stored %d", e.counters.SkippedInProgress.Load(), e.counters.SkippedStored.Load())
	}
}

// gradient-protocol §7.3: admission is server-wide; when it is full the answer is Retry,
// before any grant.
func TestFullAdmissionAnswersRetry(t *testing.T) {
	e := newEnv(t, AdmissionConfig{LargeSlots: 1, SmallSlots: 1, ByteBudget: 3 << 20})
	a, recA := e.session()
	b, recB := e.session(func(c *Config) { c.WorkerID = "w2" })
	req := func(id uint64, size uint64) *wire.UploadRequest {
		return &wire.UploadRequest{RequestID: id, Object: &wire.UploadObjectNar{StorePath: storePath("p")}, Size: size}
	}
	steps := []struct {
		s    *Session
		rec  *recorder
		req  *wire.UploadRequest
		full bool
	}{
		{a, recA, req(1, 2<<20), false}, // the large slot
		{b, recB, req(1, 2<<20), true},  // no second large slot
		{b, recB, req(2, 1<<20), false}, // a small one (1 MiB is small)
		{b, recB, req(3, 100), true},    // no second small slot
	}
	for i, st := range steps {
		handle(t, st.s, st.req)
		switch m := st.rec.next(t).(type) {
		case *wire.UploadCommitted:
			if _, ok := m.Outcome.(*wire.UploadOutcomeRetry); !ok || !st.full {
				t.Errorf("step %d: %#v", i, m.Outcome)
			}
		case *wire.UploadGrant:
			if st.full {
				t.Errorf("step %d granted past the limit", i)
			}
		}
	}
	handle(t, a, &wire.UploadCancel{RequestID: 1})
	handle(t, b, req(4, 2<<20)) // 2 MiB + the small 1 MiB fit the 3 MiB budget
	next[*wire.UploadGrant](t, recB)
	if e.counters.RetryAdmission.Load() != 2 {
		t.Errorf("admission retries = %d, want 2", e.counters.RetryAdmission.Load())
	}
}

// An upload idle past the 300 s lease loses its slot to the next request; its late chunks
// are dropped and its finish is answered Retry. The partial stays for the retry.
func TestIdleUploadLosesItsLease(t *testing.T) {
	e := newEnv(t, AdmissionConfig{LargeSlots: 1})
	obj := narstoretest.Make(narstoretest.NAR(2<<20, 10))
	a, recA := e.session()
	b, recB := e.session(func(c *Config) { c.WorkerID = "w2" })
	handle(t, a, &wire.UploadRequest{RequestID: 1, Object: &wire.UploadObjectNar{StorePath: storePath("a")}, Size: 2 << 20})
	next[*wire.UploadGrant](t, recA)
	handle(t, a, &wire.UploadChunk{RequestID: 1, Data: obj.Compressed[:1000]})
	e.clock.Advance(299 * time.Second)
	bigB := &wire.UploadRequest{RequestID: 1, Object: &wire.UploadObjectNar{StorePath: storePath("b")}, Size: 2 << 20}
	handle(t, b, bigB)
	if _, ok := next[*wire.UploadCommitted](t, recB).Outcome.(*wire.UploadOutcomeRetry); !ok {
		t.Fatal("a live lease was taken")
	}
	e.clock.Advance(2 * time.Second)
	bigB.RequestID = 2
	handle(t, b, bigB)
	next[*wire.UploadGrant](t, recB)
	handle(t, a, &wire.UploadChunk{RequestID: 1, Data: obj.Compressed[1000:2000], Offset: 1000})
	handle(t, a, &wire.UploadFinished{RequestID: 1, Metadata: metadata(obj)})
	want := &wire.UploadOutcomeRetry{Reason: "the upload lease expired"}
	if diff := cmp.Diff(want, next[*wire.UploadCommitted](t, recA).Outcome); diff != "" {
		t.Errorf("expired upload (-want +got):\n%s", diff)
	}
	if e.counters.LeasesExpired.Load() != 1 || len(e.partials()) != 2 {
		t.Errorf("expired %d, partials %v", e.counters.LeasesExpired.Load(), e.partials())
	}
}

// A store that cannot record the path gets Retry; the verified object stays stored (an
// object without a row is harmless, a row without an object is not).
func TestRecordFailureIsRetried(t *testing.T) {
	e := newEnv(t)
	obj := narstoretest.Make(narstoretest.NAR(100<<10, 11))
	p := storePath("r")
	s, rec := e.session(func(c *Config) { c.Paths = &faultyPaths{Paths: e.db, putErr: errors.New("disk I/O error")} })
	if _, ok := doUpload(t, s, rec, 1, p, obj).(*wire.UploadOutcomeRetry); !ok || e.counters.RetryRecord.Load() != 1 {
		t.Fatal("a failed record is not answered Retry")
	}
	if _, ok := e.lookup(p, e.main.ID); ok {
		t.Error("row recorded")
	}
	e.admissionIdle(t)
}

// gradient-protocol §1.5: UploadFinished travels on the control lane and overtakes the
// last chunks on the bulk lane. The commit waits for them; a failure after the finish is
// answered at once.
func TestFinishedBeforeTheLastChunks(t *testing.T) {
	obj := narstoretest.Make(narstoretest.NAR(4<<20, 15))
	third := uint64(len(obj.Compressed) / 3)
	cases := []struct {
		name  string
		after func(*testing.T, *env, *Session)
		want  wire.UploadOutcome
	}{
		{"the rest arrives", func(t *testing.T, _ *env, s *Session) {
			sendRange(t, s, 1, obj.Compressed, third, 2*third)
			sendChunks(t, s, 1, obj.Compressed, 2*third)
		}, &wire.UploadOutcomeOk{}},
		{"a gap after the finish", func(t *testing.T, _ *env, s *Session) {
			handle(t, s, &wire.UploadChunk{RequestID: 1, Data: obj.Compressed[2*third:], Offset: 2 * third, IsFinal: true})
		}, &wire.UploadOutcomeRetry{Reason: fmt.Sprintf("chunk at offset %d, the staged bytes end at %d", 2*third, third)}},
		{"the lease expires after the finish", func(t *testing.T, e *env, s *Session) {
			e.clock.Advance(301 * time.Second)
			e.admission.Sweep()
		}, &wire.UploadOutcomeRetry{Reason: "the upload lease expired"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			s, rec := e.session()
			handle(t, s, &wire.UploadRequest{RequestID: 1, Object: &wire.UploadObjectNar{StorePath: storePath("x")}, Size: uint64(len(obj.NAR))})
			next[*wire.UploadGrant](t, rec)
			sendRange(t, s, 1, obj.Compressed, 0, third)
			handle(t, s, &wire.UploadFinished{RequestID: 1, Metadata: metadata(obj)})
			rec.none(t)
			c.after(t, e, s)
			if diff := cmp.Diff(c.want, next[*wire.UploadCommitted](t, rec).Outcome); diff != "" {
				t.Errorf("outcome (-want +got):\n%s", diff)
			}
			rec.none(t)
		})
	}
}
