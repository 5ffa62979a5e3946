package tier

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/buildfleet/buildfleet/internal/pace/frameserver"
	"github.com/buildfleet/buildfleet/internal/pace/store"
	"github.com/buildfleet/buildfleet/internal/pace/store/storetest"
	"github.com/buildfleet/buildfleet/internal/pace/value"
	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

var errDiskFull = errors.New("no space left on device")

// diskTier is a disk-only tier on a filesystem that fails on command.
func diskTier(t testing.TB, up upstream) (*Tier, *storetest.FaultFS) {
	t.Helper()
	fs := storetest.NewFaultFS(nil)
	cfg := Config{Dir: t.TempDir(), FS: fs, Sync: store.SyncNever}
	if up == nil {
		return newTier(t, cfg), fs
	}
	return newTierWith(t, cfg, up), fs
}

// pace-node §4 rule 2: an upstream hit the local tier fails to keep is counted and still
// served.
func TestFillFailureIsCountedAndStillServed(t *testing.T) {
	up := newFakeUpstream()
	v := compileValue(t, "object")
	up.put("k", v)
	tr, fs := diskTier(t, up)
	fs.Fail(storetest.OpWrite, errDiskFull, -1)

	if got := expectStatus(t, tr.ServeFrom(bg, loopbackPeer, fetchReq("k")), wire.StatusOk); !bytes.Equal(got, v) {
		t.Fatalf("served %q", got)
	}
	if s := tr.Snapshot(); s.FillFailures != 1 || s.UpstreamHits != 1 {
		t.Fatalf("counters %+v", s)
	}
	fs.Heal()
	tr.ServeFrom(bg, loopbackPeer, fetchReq("k"))
	if fetches, _ := up.calls(); fetches != 2 {
		t.Fatalf("%d upstream fetches: the failed fill must not have left a local copy", fetches)
	}
}

// pace-node §4 rule 3: a failed local write is the client's storage-write-failed, counted; the
// offer upstream is still made.
func TestStoreFailureIsReportedAndStillOffered(t *testing.T) {
	up := newFakeUpstream()
	tr, fs := diskTier(t, up)
	fs.Fail(storetest.OpWrite, errDiskFull, -1)
	ref := expectRefusal(t, tr.ServeFrom(bg, loopbackPeer, storeReq("k", "", "", compileValue(t, "o"))), wire.CodeStorageWriteFailed)
	if strings.Contains(ref.Message, "space") || strings.Contains(ref.Message, "/") {
		t.Fatalf("the refusal leaks the server's error: %q", ref.Message)
	}
	eventually(t, "the offer", func() bool { return tr.Snapshot().UpstreamStores == 1 })
	if s := tr.Snapshot(); s.StoreFailures != 1 {
		t.Fatalf("counters %+v", s)
	}
	if _, ok := up.get("k"); !ok {
		t.Fatal("the upstream did not get the value")
	}
}

// STORE and FETCH validation is pace-kv's (package cacheverbs), counted under the tier's names,
// and nothing refused is offered upstream.
func TestRefusalsMatchPaceKV(t *testing.T) {
	up := newFakeUpstream()
	tr := newTierWith(t, Config{}, up)
	good := compileValue(t, "o")
	foreign := append([]byte{value.Generation + 1}, good[1:]...)
	tests := []struct {
		name string
		req  *frameserver.Request
		code wire.Code
	}{
		{"FETCH of an empty key", fetchReq(""), wire.CodeMalformedFrame},
		{"CACHE-DROP of a reserved key", dropReq("\x01cohort:x"), wire.CodeMalformedFrame},
		{"STORE of plain bytes", storeReq("k", "", "", []byte("plain")), wire.CodeMalformedValue},
		{"STORE of another generation", storeReq("k", "", "", foreign), wire.CodeForeignValueGeneration},
	}
	for _, tt := range tests {
		expectRefusal(t, tr.ServeFrom(bg, loopbackPeer, tt.req), tt.code)
	}
	if s := tr.Snapshot(); s.RefusedMalformedPayload != 3 || s.RefusedForeignGeneration != 1 {
		t.Fatalf("counters %+v", s)
	}
	expectStatus(t, tr.ServeFrom(bg, loopbackPeer, storeReq("ok", "", "", good)), wire.StatusOk)
	eventually(t, "the one valid offer", func() bool { return tr.Snapshot().UpstreamStores == 1 })
	if _, stores := up.calls(); stores != 1 {
		t.Fatalf("%d stores offered upstream, want only the valid one", stores)
	}
}

// A value the upstream answers that is not a current compile-value is neither served nor kept.
func TestUndecodableUpstreamValueIsAMiss(t *testing.T) {
	up := newFakeUpstream()
	up.put("k", []byte("garbage"))
	tr := newTierWith(t, Config{}, up)
	expectStatus(t, tr.ServeFrom(bg, loopbackPeer, fetchReq("k")), wire.StatusMiss)
	expectStatus(t, tr.ServeFrom(bg, loopbackPeer, fetchReq("k")), wire.StatusMiss)
	if fetches, _ := up.calls(); fetches != 2 {
		t.Fatalf("%d upstream fetches: garbage must not be kept locally", fetches)
	}
}

func TestFrameRefusalsAreCounted(t *testing.T) {
	tr := newTier(t, Config{})
	tr.CountFrameRefusal(frameserver.RefusedPayloadTooLarge)
	tr.CountFrameRefusal(frameserver.RefusedMalformedPayload)
	tr.CountFrameRefusal(frameserver.RefusedUnknownOpcode) // not a cache-tier series
	if s := tr.Snapshot(); s.RefusedPayloadTooLarge != 1 || s.RefusedMalformedPayload != 1 {
		t.Fatalf("counters %+v", s)
	}
}

func TestNonCacheVerbIsUnknownOpcode(t *testing.T) {
	tr := newTier(t, Config{})
	expectRefusal(t, tr.ServeFrom(bg, loopbackPeer, request(wire.OpLease)), wire.CodeUnknownOpcode)
}
