package main

import (
	"bytes"
	"crypto/sha256"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/klauspost/compress/zstd"

	"github.com/buildfleet/buildfleet/internal/gradient/api"
	"github.com/buildfleet/buildfleet/internal/gradient/apiclient"
	"github.com/buildfleet/buildfleet/internal/gradient/handshake"
	"github.com/buildfleet/buildfleet/internal/gradient/nixexec"
	"github.com/buildfleet/buildfleet/internal/gradient/nixhash"
	"github.com/buildfleet/buildfleet/internal/gradient/session"
	"github.com/buildfleet/buildfleet/internal/gradient/wire"
	"github.com/buildfleet/buildfleet/internal/gradient/wsconn"
)

// dialAsWorker opens a worker session on url (the peer side of the handshake).
func dialAsWorker(t *testing.T, url, workerID string, tokens ...wire.PeerToken) (*wsconn.WorkerConn, session.Result, error) {
	t.Helper()
	c, err := wsconn.DialServer(bg, url, wsconn.DialOptions{})
	if err != nil {
		t.Fatal(err)
	}
	role, out := session.NewPeer(session.PeerConfig{WorkerID: workerID, Tokens: session.NewPeerTokens(tokens)})
	_, res, err := handshake.Run(bg, c, role, out, nil)
	return c, res, err
}

// verifyCachedOutputs checks, through a worker session of its own, that the server's cache
// answers a Pull query for every output of drv with the NAR hash the local store records,
// and streams exactly the NAR `nix-store --dump` produces.
func verifyCachedOutputs(t *testing.T, f *fleet, drv string) {
	t.Helper()
	outs := storeLines(t, "nix-store", "-q", "--outputs", drv)
	c := f.inspector(t)
	defer c.Close(bg)
	status := pullQuery(t, c, outs)
	infos, err := nixexec.New(nixexec.Options{}).PathInfo(bg, outs)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range outs {
		got, ok := status[p]
		if !ok || !got.Cached {
			t.Fatalf("%s is not cached: %+v", p, got)
		}
		if !sameHash(t, got.NarHash.Value, infos[i].NarHash) {
			t.Fatalf("%s: cache says nar_hash %s, the store %s", p, got.NarHash.Value, infos[i].NarHash)
		}
		nar := pullNAR(t, c, p)
		dump, err := exec.Command("nix-store", "--dump", p).Output()
		if err != nil || !bytes.Equal(nar, dump) {
			t.Fatalf("%s: pulled NAR (%d bytes) differs from nix-store --dump (%d bytes): %v", p, len(nar), len(dump), err)
		}
		if sum, _ := nixhash.Parse(infos[i].NarHash); sum != nixhash.SHA256(sha256.Sum256(nar)) {
			t.Fatalf("%s: pulled NAR does not hash to the store's narHash", p)
		}
	}
	listed, err := f.api.CachePaths(bg, f.cache.Name, 1000)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range outs {
		if !slices.ContainsFunc(listed.Paths, func(c api.CachedPath) bool { return c.StorePath == p && c.FileSize > 0 }) {
			t.Fatalf("%s is missing from the API's listing of cache %s", p, f.cache.Name)
		}
	}
}

// inspector is a session of a second worker ID registered for the fleet's project, used
// only to ask the cache.
func (f *fleet) inspector(t *testing.T) *wsconn.WorkerConn {
	t.Helper()
	id := newWorkerID(t)
	reg, err := f.api.RegisterWorker(bg, apiclient.Peer{Kind: apiclient.ProjectPeer, Ref: f.project.ID},
		api.RegisterWorkerRequest{WorkerID: id, DisplayName: "inspector"})
	if err != nil {
		t.Fatal(err)
	}
	c, _, err := dialAsWorker(t, f.srv.protoURL(), id, wire.PeerToken{PeerID: f.project.ID, Token: reg.Token})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func pullQuery(t *testing.T, c *wsconn.WorkerConn, paths []string) map[string]wire.CachedPath {
	t.Helper()
	qid := uuid.NewString()
	if err := c.Send(bg, &wire.CacheQuery{QueryID: qid, Paths: paths, Mode: wire.QueryModePull,
		NarSizes: make([]wire.Option[uint64], len(paths))}); err != nil {
		t.Fatal(err)
	}
	out := map[string]wire.CachedPath{}
	for {
		m := read(t, c)
		switch m := m.(type) {
		case *wire.CacheStatus:
			if m.QueryID == qid {
				for _, p := range m.Cached {
					out[p.Path] = p
				}
				return out
			}
		case *wire.CacheError:
			t.Fatalf("CacheError: %s", m.Message)
		}
	}
}

// pullNAR streams one path and returns the decompressed NAR.
func pullNAR(t *testing.T, c *wsconn.WorkerConn, path string) []byte {
	t.Helper()
	if err := c.Send(bg, &wire.NarRequest{JobID: "inspect", Paths: []string{path}}); err != nil {
		t.Fatal(err)
	}
	var compressed []byte
	for {
		switch m := read(t, c).(type) {
		case *wire.NarStreamHeader:
			compressed = make([]byte, 0, m.TotalBytes)
		case *wire.NarPush:
			compressed = append(compressed, m.Data...)
			if m.IsFinal {
				dec, err := zstd.NewReader(nil)
				if err != nil {
					t.Fatal(err)
				}
				defer dec.Close()
				nar, err := dec.DecodeAll(compressed, nil)
				if err != nil {
					t.Fatal(err)
				}
				return nar
			}
		case *wire.NarUnavailable:
			t.Fatalf("%s unavailable: %s", path, m.Reason)
		case *wire.NarAbort:
			t.Fatalf("%s aborted: %s", path, m.Reason)
		}
	}
}

func read(t *testing.T, c *wsconn.WorkerConn) wire.ServerMessage {
	t.Helper()
	ctx, cancel := contextWithTimeout(30 * time.Second)
	defer cancel()
	m, release, err := c.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if p, ok := m.(*wire.NarPush); ok {
		p.Data = append([]byte(nil), p.Data...)
	}
	release()
	return m
}

func sameHash(t *testing.T, a, b string) bool {
	ha, err1 := nixhash.Parse(a)
	hb, err2 := nixhash.Parse(b)
	return err1 == nil && err2 == nil && ha == hb
}

func storeLines(t *testing.T, name string, args ...string) []string {
	t.Helper()
	out, err := exec.Command(name, args...).Output()
	if err != nil {
		t.Fatalf("%s %v: %v", name, args, err)
	}
	return strings.Fields(string(out))
}
