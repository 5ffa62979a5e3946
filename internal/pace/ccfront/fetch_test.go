package ccfront_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/ccfront"
	"github.com/buildfleet/buildfleet/internal/pace/ccstats"
	"github.com/buildfleet/buildfleet/internal/pace/kv"
	"github.com/buildfleet/buildfleet/internal/pace/kvclient"
	"github.com/buildfleet/buildfleet/internal/pace/wire"
	"pgregory.net/rapid"
)

// The front's FETCH frame is the one internal/pace/wire builds.
func TestFetchRequestIsWires(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		key := rapid.StringN(0, 80, -1).Draw(t, "key")
		if got, want := ccfront.FetchRequest(key), wire.AppendRequest(nil, wire.OpFetch, []byte(key)); !bytes.Equal(got, want) {
			t.Fatalf("front %x, wire %x", got, want)
		}
	})
}

// readAgainst runs the front's reply reader over b and reports what it made of it.
func readAgainst(b []byte) (hit bool, body []byte, err error) {
	hit, err = ccfront.ReadReply(bytes.NewReader(b), func(r io.Reader, n uint32) error {
		var rerr error
		body, rerr = io.ReadAll(r)
		if rerr == nil && uint32(len(body)) != n {
			rerr = io.ErrUnexpectedEOF
		}
		return rerr
	})
	return hit, body, err
}

// checkAgainstWire: whatever bytes arrive, the front accepts a value or a miss only where
// internal/pace/wire reads the same, and never reads past the cap.
func checkAgainstWire(t interface{ Fatalf(string, ...any) }, b []byte) {
	hit, body, err := readAgainst(b)
	status, payload, werr := wire.ReadReply(bytes.NewReader(b), wire.OpFetch, uint32(ccfront.MaxValue), nil)
	switch {
	case err == nil && hit:
		if werr != nil || status != wire.StatusOk || !bytes.Equal(body, payload) {
			t.Fatalf("front hit %x; wire %v %x %v", body, status, payload, werr)
		}
	case err == nil:
		if werr != nil || status != wire.StatusMiss {
			t.Fatalf("front miss; wire %v %v", status, werr)
		}
	case errors.Is(err, ccfront.ErrRefusedRead):
		var r wire.Refusal
		if werr == nil || (!errors.As(werr, &r) && status == wire.StatusOk) {
			t.Fatalf("front refused; wire %v %v", status, werr)
		}
	}
}

func TestReadReplyTable(t *testing.T) {
	ok := wire.AppendReply(nil, wire.StatusOk, []byte("value"))
	for name, b := range map[string][]byte{
		"ok":               ok,
		"miss":             wire.AppendReply(nil, wire.StatusMiss, nil),
		"miss with bytes":  wire.AppendReply(nil, wire.StatusMiss, []byte("x")),
		"error":            wire.AppendReply(nil, wire.StatusError, []byte{byte(wire.CodeMalformedFrame)}),
		"empty error":      wire.AppendReply(nil, wire.StatusError, nil),
		"progress":         wire.AppendReply(nil, wire.StatusProgress, nil),
		"short header":     ok[:3],
		"short payload":    ok[:len(ok)-1],
		"over the cap":     {1, 0x10, 0, 0, 1},
		"unknown status 9": {9, 0, 0, 0, 0},
	} {
		hit, _, err := readAgainst(b)
		wantHit := name == "ok"
		wantErr := name != "ok" && name != "miss"
		if hit != wantHit || (err != nil) != wantErr {
			t.Errorf("%s: hit %v err %v", name, hit, err)
		}
		checkAgainstWire(t, b)
	}
}

func FuzzReadReply(f *testing.F) {
	f.Fuzz(func(t *testing.T, b []byte) { checkAgainstWire(t, b) })
}

func startKV(t *testing.T) string {
	t.Helper()
	srv, err := kv.New(kv.Config{Listen: "127.0.0.1:0", MaxMemory: 16 << 20})
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	})
	return srv.Addr().String()
}

// The front's exchange against a real pace-kv: a miss, then the stored value byte for byte.
func TestFetchAgainstPaceKV(t *testing.T) {
	addr := startKV(t)
	key := "aa" + string(bytes.Repeat([]byte("0"), 62))
	var got []byte
	recv := func(r io.Reader, n uint32) error { var err error; got, err = io.ReadAll(r); return err }
	if hit, err := ccfront.Fetch(addr, key, recv); hit || err != nil {
		t.Fatalf("empty cache: hit %v err %v", hit, err)
	}
	value := []byte{1, 0, 0, 0, 3, 'o', 'b', 'j', 0, 0, 0, 0} // generation 1, a 3-byte object, no regions
	c, err := kvclient.Dial(context.Background(), kvclient.Options{Addr: addr, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Store(context.Background(), key, kvclient.StoreArgs{PrefetchGroup: "default"}, value); err != nil {
		t.Fatal(err)
	}
	for _, a := range []string{addr, "localhost:" + addr[len("127.0.0.1:"):]} {
		got = nil
		if hit, err := ccfront.Fetch(a, key, recv); !hit || err != nil || !bytes.Equal(got, value) {
			t.Fatalf("%s: hit %v err %v value %x", a, hit, err, got)
		}
	}
}

func TestFetchFromNowhereFails(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	for _, a := range []string{addr, "cache.example:6674", "not an address"} {
		if hit, err := ccfront.Fetch(a, "k", func(io.Reader, uint32) error { return nil }); hit || err == nil {
			t.Errorf("%s: hit %v err %v", a, hit, err)
		}
	}
}

// The front's statistics line folds like pace-cc-full's.
func TestStatsLineIsARecord(t *testing.T) {
	line, err := ccfront.StatsLine("g", "a.c", 1.5, 0.25)
	if err != nil {
		t.Fatal(err)
	}
	r, err := ccstats.ParseLine(line)
	want := ccstats.Record{Time: 1_700_000_000_000, Outcome: ccstats.Hit, Via: "direct", Group: "g", Source: "a.c",
		TotalMS: 1.5, LookupMS: 0.25, CacheMS: 0.25}
	if err != nil || r != want {
		t.Fatalf("ParseLine = %+v, %v; want %+v", r, err, want)
	}
}

// Whatever the names, the hand-written line parses to what encoding/json's line of the same
// record parses to.
func TestStatsLinePropertyAgreesWithEncodingJSON(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		group := rapid.OneOf(rapid.String(), rapid.StringMatching(`[ -~\x00-\x1f"\\]*`)).Draw(t, "group")
		source := rapid.String().Draw(t, "source")
		if rapid.Bool().Draw(t, "raw bytes") {
			source = string(rapid.SliceOf(rapid.Byte()).Draw(t, "bytes")) // not always UTF-8
		}
		total := rapid.Float64Range(0, 1e7).Draw(t, "total")
		lookup := rapid.Float64Range(0, 1e7).Draw(t, "lookup")
		line, err := ccfront.StatsLine(group, source, total, lookup)
		if err != nil {
			t.Fatal(err)
		}
		got, err := ccstats.ParseLine(line)
		if err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		ref, _ := json.Marshal(ccstats.Record{Time: 1_700_000_000_000, Outcome: ccstats.Hit, Via: "direct", Group: group,
			Source: source, TotalMS: total, LookupMS: lookup, CacheMS: lookup})
		want, err := ccstats.ParseLine(ref)
		if err != nil || got != want {
			t.Fatalf("front %q -> %+v; encoding/json %q -> %+v", line, got, ref, want)
		}
	})
}

// The front's passthrough line parses to what encoding/json's line of the same record parses
// to, whatever the names.
func TestPassthroughLineAgreesWithEncodingJSON(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		group := rapid.OneOf(rapid.String(), rapid.StringMatching(`[ -~\x00-\x1f"\\]*`)).Draw(t, "group")
		reason := rapid.SampledFrom([]string{"link", "assembler input", "syntax only"}).Draw(t, "reason")
		if rapid.Bool().Draw(t, "raw bytes") {
			group = string(rapid.SliceOf(rapid.Byte()).Draw(t, "bytes")) // not always UTF-8
		}
		total := rapid.Float64Range(0, 1e7).Draw(t, "total")
		line, err := ccfront.PassthroughLine(group, reason, total)
		if err != nil {
			t.Fatal(err)
		}
		got, err := ccstats.ParseLine(line)
		if err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		ref, _ := json.Marshal(ccstats.Record{Time: 1_700_000_000_000, Outcome: ccstats.Passthrough, Reason: reason,
			Group: group, TotalMS: total})
		want, err := ccstats.ParseLine(ref)
		if err != nil || got != want {
			t.Fatalf("front %q -> %+v; encoding/json %q -> %+v", line, got, ref, want)
		}
	})
}
