package server

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/handshake"
	"github.com/buildfleet/buildfleet/internal/gradient/narstore"
	"github.com/buildfleet/buildfleet/internal/gradient/peertoken"
	"github.com/buildfleet/buildfleet/internal/gradient/session"
	"github.com/buildfleet/buildfleet/internal/gradient/store"
	"github.com/buildfleet/buildfleet/internal/gradient/store/sqlite"
	"github.com/buildfleet/buildfleet/internal/gradient/wire"
	"github.com/buildfleet/buildfleet/internal/gradient/wsconn"
)

var ctx = context.Background()

// rig is an in-process server on a real SQLite store and a real loopback listener, with one
// project subscribed to one cache.
type rig struct {
	t       *testing.T
	srv     *Server
	st      store.Store
	url     string
	project store.Project
	dir     string // the data directory: the database and the NARs
}

func newRig(t *testing.T, cfg Config) *rig {
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
	cfg.Store, cfg.NARs = st, nars
	r := &rig{t: t, st: st, srv: New(cfg), dir: dir}
	if _, err := r.srv.Recover(ctx); err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	go r.srv.Run(runCtx)
	hs := httptest.NewServer(r.srv.Handler())
	t.Cleanup(func() { stop(); r.srv.Shutdown(ctx); hs.Close() })
	r.url = "ws" + strings.TrimPrefix(hs.URL, "http") + "/proto"
	r.project, err = st.CreateProject(ctx, store.NewProject{Name: "p", RepoURL: "file:///nowhere", Branch: "main", Wildcards: []string{"packages"}})
	if err != nil {
		t.Fatal(err)
	}
	c, err := st.CreateCache(ctx, store.NewCache{Name: "c"})
	if err == nil {
		err = st.SubscribeCache(ctx, r.project.ID, c.ID)
	}
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// register registers workerID for the rig's project and returns its token.
func (r *rig) register(workerID string) string {
	r.t.Helper()
	token := tokenOf(workerID)
	_, err := r.st.CreateRegistration(ctx, store.NewRegistration{PeerID: r.project.ID, WorkerID: workerID,
		TokenHash: peertoken.SHA256Hex(token), EnableFetch: true, EnableEval: true, EnableBuild: true})
	if err != nil {
		r.t.Fatal(err)
	}
	return token
}

func tokenOf(workerID string) string { return "token-of-" + workerID }

// peer is a worker session dialed into the rig.
type peer struct {
	t *testing.T
	c *wsconn.WorkerConn
}

// connect registers and connects workerID with every capability.
func (r *rig) connect(workerID string) *peer {
	r.t.Helper()
	r.register(workerID)
	return r.handshake(workerID, wire.GradientCapabilities{Fetch: true, Eval: true, Build: true}, nil)
}

// handshake connects an already registered workerID offering caps, with header on the
// upgrade request.
func (r *rig) handshake(workerID string, caps wire.GradientCapabilities, header http.Header) *peer {
	r.t.Helper()
	c, err := wsconn.DialServer(ctx, r.url, wsconn.DialOptions{Header: header})
	if err != nil {
		r.t.Fatal(err)
	}
	role, out := session.NewPeer(session.PeerConfig{WorkerID: workerID, Capabilities: caps,
		Tokens: session.NewPeerTokens([]wire.PeerToken{{PeerID: r.project.ID, Token: tokenOf(workerID)}})})
	if _, _, err := handshake.Run(ctx, c, role, out, nil); err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(func() { c.Abort() })
	return &peer{t: r.t, c: c}
}

func (p *peer) send(m wire.ClientMessage) {
	p.t.Helper()
	if err := p.c.Send(ctx, m); err != nil {
		p.t.Fatal(err)
	}
}

// next reads the next message, failing after a few seconds.
func (p *peer) next() wire.ServerMessage {
	p.t.Helper()
	m, err := p.read(10 * time.Second)
	if err != nil {
		p.t.Fatal(err)
	}
	return m
}

func (p *peer) read(within time.Duration) (wire.ServerMessage, error) {
	rctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	m, release, err := p.c.Read(rctx)
	if err != nil {
		return nil, err
	}
	release()
	return m, nil
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
