package tier

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/frameserver"
	"github.com/buildfleet/buildfleet/internal/pace/kv"
	"github.com/buildfleet/buildfleet/internal/pace/kvclient"
	"github.com/buildfleet/buildfleet/internal/pace/value"
)

// serveTier puts the tier behind a real frame server on loopback, as the node's port does.
func serveTier(t testing.TB, tr *Tier) string {
	t.Helper()
	srv, err := frameserver.New(frameserver.Config{Handler: tr})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(bg, 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	})
	return ln.Addr().String()
}

// One checkout stores, another fetches: the tier canonicalizes with the producer's roots
// exactly as pace-kv does, the upstream receives the canonical bytes, and the consumer's
// localization puts its own roots back.
func TestCanonicalOnStoreLocalizedByTheClient(t *testing.T) {
	srv, _ := startKV(t, kv.Config{})
	tr := newTier(t, Config{Upstream: srv.Addr().String()})
	addr := serveTier(t, tr)
	client := kvclient.Options{Addr: addr, Timeout: 10 * time.Second}

	dep := value.Region{Grammar: value.GccDepfile,
		Text: []byte("a.o: /home/alice/src/a.c /home/alice/build/gen/config.h /usr/include/stdio.h\n")}
	stored := compileValue(t, "object", value.Region{}, value.Region{}, dep)
	alice := kvclient.StoreArgs{PrefetchGroup: "default", SourceRoot: "/home/alice/src", BuildTree: "/home/alice/build"}
	if err := kvclient.Store(bg, client, "k", alice, stored); err != nil {
		t.Fatal(err)
	}

	wantCanonical := "a.o: <SRCROOT>/a.c <BUILDTREE>/gen/config.h /usr/include/stdio.h\n"
	local, hit, err := kvclient.Fetch(bg, client, "k")
	if !hit || err != nil {
		t.Fatalf("fetch through the tier: hit %v err %v", hit, err)
	}
	if got := depfile(t, local); got != wantCanonical {
		t.Fatalf("the tier holds %q, want the canonical %q", got, wantCanonical)
	}
	var upstream []byte
	eventually(t, "the canonical value at the upstream", func() bool {
		upstream, hit, _ = kvclient.Fetch(bg, kvOpts(srv, ""), "k")
		return hit
	})
	if string(upstream) != string(local) {
		t.Fatalf("upstream holds %q, tier holds %q: the upstream must get the canonical bytes", upstream, local)
	}

	v, err := value.Decode(local)
	if err != nil {
		t.Fatal(err)
	}
	bob := value.Localize(v, value.Roots{SrcRoot: "/work/bob/src", BuildTree: "/work/bob/out"})
	want := "a.o: /work/bob/src/a.c /work/bob/out/gen/config.h /usr/include/stdio.h\n"
	if got := string(bob.Regions[2].Text); got != want {
		t.Fatalf("localized for bob: %q, want %q", got, want)
	}
	if string(bob.Object) != "object" {
		t.Fatal("the object changed")
	}
}

func depfile(t testing.TB, b []byte) string {
	t.Helper()
	v, err := value.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	return string(v.Regions[2].Text)
}
