package kv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/buildfleet/buildfleet/internal/pace/kvclient"
	"github.com/buildfleet/buildfleet/internal/pace/value"
	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

var ctx = context.Background()

func TestStoreThenFetchRoundTrip(t *testing.T) {
	srv := start(t, Config{})
	v := compileValue(t, "object bytes")
	if _, hit, err := kvclient.Fetch(ctx, opts(srv), "k1"); hit || err != nil {
		t.Fatalf("fetch before store: %v %v", hit, err)
	}
	if err := kvclient.Store(ctx, opts(srv), "k1", kvclient.StoreArgs{}, v); err != nil {
		t.Fatal(err)
	}
	got, hit, err := kvclient.Fetch(ctx, opts(srv), "k1")
	if !hit || err != nil || !bytes.Equal(got, v) {
		t.Fatalf("fetch: hit=%v err=%v", hit, err)
	}
	if metric(t, srv, "pace_kv_hits_total") != 1 || metric(t, srv, "pace_kv_misses_total") != 1 {
		t.Fatal("hit/miss counters")
	}
}

func TestStoreCanonicalizesTextRegionsWithTheProducersRoots(t *testing.T) {
	srv := start(t, Config{})
	dep := value.Region{Grammar: value.GccDepfile, Text: []byte("a.o: /home/u/src/a.c /home/u/src/inc/a.h /usr/include/stdio.h\n")}
	err := kvclient.Store(ctx, opts(srv), "k", kvclient.StoreArgs{SourceRoot: "/home/u/src"}, compileValue(t, "obj", value.Region{}, value.Region{}, dep))
	if err != nil {
		t.Fatal(err)
	}
	got, _, _ := kvclient.Fetch(ctx, opts(srv), "k")
	v, err := value.Decode(got)
	if err != nil {
		t.Fatal(err)
	}
	want := "a.o: <SRCROOT>/a.c <SRCROOT>/inc/a.h /usr/include/stdio.h\n"
	if string(v.Regions[2].Text) != want || string(v.Object) != "obj" {
		t.Fatalf("stored depfile %q, want %q", v.Regions[2].Text, want)
	}
}

func TestStoreRefusesWhatIsNotACompileValue(t *testing.T) {
	srv := start(t, Config{})
	err := kvclient.Store(ctx, opts(srv), "k", kvclient.StoreArgs{}, []byte("plain bytes"))
	var r wire.Refusal
	if !errors.As(err, &r) || r.Code != wire.CodeMalformedValue {
		t.Fatalf("err = %v", err)
	}
	if metric(t, srv, "pace_cache_stores_refused_not_a_compile_value_total") != 1 {
		t.Fatal("counter")
	}
}

func TestForeignGenerationRefusedOnStoreAndMissOnFetch(t *testing.T) {
	srv := start(t, Config{})
	foreign := compileValue(t, "obj")
	foreign[0] = value.Generation + 1
	err := kvclient.Store(ctx, opts(srv), "k", kvclient.StoreArgs{}, foreign)
	var r wire.Refusal
	if !errors.As(err, &r) || r.Code != wire.CodeForeignValueGeneration {
		t.Fatalf("err = %v", err)
	}
	if metric(t, srv, "pace_cache_stores_refused_foreign_generation_total") != 1 {
		t.Fatal("counter")
	}
	// A value of another generation already in storage (an older build's) is a miss.
	if err := srv.st.Put([]byte("old"), foreign); err != nil {
		t.Fatal(err)
	}
	if _, hit, err := kvclient.Fetch(ctx, opts(srv), "old"); hit || err != nil {
		t.Fatalf("foreign value served: hit=%v err=%v", hit, err)
	}
}

func TestVerbsPaceKVDoesNotServe(t *testing.T) {
	srv := start(t, Config{})
	c := dialRaw(t, srv)
	c.send(wire.OpLease, []byte("fp"), []byte("key"), nil, nil, nil)
	if r := c.expectRefusal(wire.CodeDispatchNotPermitted); !bytes.Contains([]byte(r.Message), []byte("scheduler")) {
		t.Errorf("LEASE refusal names no scheduler: %q", r.Message)
	}
	c.send(wire.OpCompile, make([][]byte, 10)...)
	if r := c.expectRefusal(wire.CodeDispatchNotPermitted); !bytes.HasPrefix([]byte(r.Message), []byte("this endpoint runs no compile worker")) {
		t.Errorf("COMPILE refusal: %q", r.Message)
	}
	c.send(wire.OpNodeStatus)
	c.expectRefusal(wire.CodeUnknownOpcode)
	c.send(wire.Op(0x7e), []byte("whatever"))
	c.expectRefusal(wire.CodeUnknownOpcode)
	// The connection is still in sync: a malformed FETCH (two fields) and then a good one.
	c.send(wire.OpFetch, []byte("a"), []byte("b"))
	c.expectRefusal(wire.CodeMalformedFrame)
	c.send(wire.OpFetch, []byte{0x01, 'x'}) // reserved key prefix
	c.expectRefusal(wire.CodeMalformedFrame)
	c.send(wire.OpFetch, []byte("k"))
	if st, _ := c.reply(); st != wire.StatusMiss {
		t.Fatalf("follow-up FETCH answered %s", st)
	}
	for series, want := range map[string]float64{
		"pace_cache_frames_refused_not_permitted_total":     2,
		"pace_cache_frames_refused_unknown_opcode_total":    2,
		"pace_cache_frames_refused_malformed_payload_total": 2,
	} {
		if got := metric(t, srv, series); got != want {
			t.Errorf("%s = %v, want %v", series, got, want)
		}
	}
}

func TestPasswordGatesEveryVerbButAuth(t *testing.T) {
	srv := start(t, Config{Password: "hunter2"})
	c := dialRaw(t, srv)
	c.send(wire.OpFetch, []byte("k"))
	c.expectRefusal(wire.CodeUnauthenticated)
	c.send(wire.OpAuth, []byte{1}, nil, []byte("wrong"))
	c.expectRefusal(wire.CodeUnauthenticated)
	c.send(wire.OpAuth, []byte{9}, nil, []byte("hunter2"))
	c.expectRefusal(wire.CodeMalformedFrame)
	c.send(wire.OpAuth, []byte{2}, nil, []byte("ticket-bytes"))
	c.expectRefusal(wire.CodeUnauthenticated)
	// Pipelined AUTH + FETCH in one write, on the same (kept) connection.
	var buf []byte
	buf = wire.AppendRequest(buf, wire.OpAuth, []byte{1}, []byte("default"), []byte("hunter2"))
	buf = wire.AppendRequest(buf, wire.OpFetch, []byte("k"))
	c.nc.Write(buf)
	if st, _ := c.reply(); st != wire.StatusOk {
		t.Fatalf("AUTH answered %s", st)
	}
	if st, _ := c.reply(); st != wire.StatusMiss {
		t.Fatalf("FETCH after AUTH answered %s", st)
	}
	if got := metric(t, srv, "pace_cache_credentials_rejected_total"); got != 2 {
		t.Errorf("credentials rejected = %v", got)
	}
	if got := metric(t, srv, "pace_cache_frames_refused_unauthenticated_total"); got != 1 {
		t.Errorf("unauthenticated frames = %v", got)
	}
	if got := metric(t, srv, "pace_cache_frames_refused_malformed_credential_total"); got != 1 {
		t.Errorf("malformed credentials = %v", got)
	}
}

func TestPasswordSetOnReloadGatesOpenConnections(t *testing.T) {
	srv := start(t, Config{})
	c := dialRaw(t, srv)
	c.send(wire.OpFetch, []byte("k"))
	if st, _ := c.reply(); st != wire.StatusMiss {
		t.Fatal(st)
	}
	srv.SetPassword("new")
	c.send(wire.OpFetch, []byte("k"))
	c.expectRefusal(wire.CodeUnauthenticated)
	// A connection verified before a rotation keeps its access.
	c.send(wire.OpAuth, []byte{1}, nil, []byte("new"))
	c.reply()
	srv.SetPassword("newer")
	c.send(wire.OpFetch, []byte("k"))
	if st, _ := c.reply(); st != wire.StatusMiss {
		t.Fatalf("verified connection lost access on rotation: %s", st)
	}
}

func TestSixtyFourConcurrentClients(t *testing.T) {
	srv := start(t, Config{})
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := 0; i < 64; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			c, err := kvclient.Dial(ctx, opts(srv))
			if err != nil {
				errs <- err
				return
			}
			defer c.Close()
			for j := 0; j < 50; j++ {
				key := fmt.Sprintf("c%d-%d", i, j)
				v := compileValue(t, key)
				if err := c.Store(ctx, key, kvclient.StoreArgs{}, v); err != nil {
					errs <- err
					return
				}
				got, hit, err := c.FetchAppend(ctx, nil, key)
				if err != nil || !hit || !bytes.Equal(got, v) {
					errs <- fmt.Errorf("%s: hit=%v err=%v", key, hit, err)
					return
				}
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestEvictionKeepsTheDiskBudget(t *testing.T) {
	const budget = 256 << 10
	srv := start(t, Config{Storage: t.TempDir(), MaxDisk: budget, MaxMemory: 0})
	for i := 0; i < 64; i++ {
		v := compileValue(t, string(bytes.Repeat([]byte{byte(i)}, 16<<10)))
		if err := kvclient.Store(ctx, opts(srv), fmt.Sprint("k", i), kvclient.StoreArgs{}, v); err != nil {
			t.Fatal(err)
		}
	}
	if used := metric(t, srv, "pace_bytes_used"); used > budget || used == 0 {
		t.Fatalf("bytes used %v, budget %d", used, budget)
	}
	if metric(t, srv, "pace_tier_evictions_total", "tier", "disk") == 0 {
		t.Fatal("no evictions counted")
	}
	if _, hit, _ := kvclient.Fetch(ctx, opts(srv), "k63"); !hit {
		t.Fatal("newest value evicted")
	}
	if _, hit, _ := kvclient.Fetch(ctx, opts(srv), "k0"); hit {
		t.Fatal("oldest value survived a full budget")
	}
}

func TestValuesSurviveARestart(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{Listen: "127.0.0.1:0", Storage: dir, MaxMemory: 1 << 20}
	srv, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve()
	v := compileValue(t, "persistent")
	if err := kvclient.Store(ctx, opts(srv), "p", kvclient.StoreArgs{}, v); err != nil {
		t.Fatal(err)
	}
	srv.Shutdown(ctx)
	again := start(t, Config{Storage: dir, MaxMemory: 1 << 20})
	got, hit, err := kvclient.Fetch(ctx, opts(again), "p")
	if !hit || err != nil || !bytes.Equal(got, v) {
		t.Fatalf("after restart: hit=%v err=%v", hit, err)
	}
}

func TestSecondServerOnTheSameStorageIsRefused(t *testing.T) {
	dir := t.TempDir()
	start(t, Config{Storage: dir})
	_, err := New(Config{Listen: "127.0.0.1:0", Storage: dir})
	if err == nil || !bytes.Contains([]byte(err.Error()), []byte(dir)) {
		t.Fatalf("second server: %v", err)
	}
}

func TestCorruptedBlobIsAMissAndCounted(t *testing.T) {
	dir := t.TempDir()
	srv := start(t, Config{Storage: dir, MaxMemory: 0})
	if err := kvclient.Store(ctx, opts(srv), "c", kvclient.StoreArgs{}, compileValue(t, "soon corrupt")); err != nil {
		t.Fatal(err)
	}
	var blobs []string
	filepath.Walk(filepath.Join(dir, "objects"), func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			blobs = append(blobs, p)
		}
		return nil
	})
	if len(blobs) != 1 {
		t.Fatalf("blobs on disk: %v", blobs)
	}
	b, _ := os.ReadFile(blobs[0])
	b[len(b)/2] ^= 0xff
	os.WriteFile(blobs[0], b, 0o644)
	if _, hit, err := kvclient.Fetch(ctx, opts(srv), "c"); hit || err != nil {
		t.Fatalf("corrupt blob served: hit=%v err=%v", hit, err)
	}
	if metric(t, srv, "pace_kv_corrupt_values_removed_total") != 1 {
		t.Fatal("corruption not counted")
	}
}

func TestHealthz(t *testing.T) {
	srv := start(t, Config{})
	resp, err := httpGet("http://" + srv.MetricsAddr().String() + "/healthz")
	if err != nil || resp != 200 {
		t.Fatalf("healthz: %v %v", resp, err)
	}
}
