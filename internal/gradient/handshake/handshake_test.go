package handshake

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/buildfleet/buildfleet/internal/gradient/session"
	"github.com/buildfleet/buildfleet/internal/gradient/session/sessiontest"
	"github.com/buildfleet/buildfleet/internal/gradient/wire"
	"github.com/buildfleet/buildfleet/internal/gradient/wsconn"
)

var ctx = context.Background()

const workerID = "0193a5c8-7f00-7000-8000-000000000001"

var job = &wire.AssignJob{JobID: "build:1", AssignmentID: "a-1", Job: &wire.BuildJob{
	Builds:      []wire.BuildSpec{{BuildID: "1", DrvPath: "/nix/store/x.drv", TimeoutSecs: wire.Some(uint64(14400))}},
	Requirement: wire.BuildRequirement{Architecture: "x86_64-linux"},
}}

// directoryAnswerer serializes a fake server directory for concurrent sessions.
func directoryAnswerer(d *sessiontest.Directory) Answerer {
	var mu sync.Mutex
	return func(_ context.Context, n session.Need) (session.Event, error) {
		mu.Lock()
		defer mu.Unlock()
		return d.Answer(n), nil
	}
}

// server runs the authority role on /proto and, once the session runs, answers one
// RequestJob with an AssignJob. Each session's end is sent on ends.
func server(t *testing.T, d *sessiontest.Directory) (url string, ends chan error) {
	ends = make(chan error, 8)
	answer := directoryAnswerer(d)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := wsconn.AcceptWorker(w, r, wsconn.Options{})
		if err != nil {
			ends <- err
			return
		}
		role, out := session.NewAuthority(session.AuthorityConfig{AcceptInbound: true})
		_, _, err = Run(r.Context(), c, role, out, answer)
		if err == nil {
			err = serveOneJob(r.Context(), c)
		}
		ends <- err
	})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return "ws" + strings.TrimPrefix(srv.URL, "http") + "/proto", ends
}

func serveOneJob(ctx context.Context, c *wsconn.ServerConn) error {
	m, release, err := c.Read(ctx)
	if err != nil {
		return err
	}
	defer release()
	if _, ok := m.(*wire.RequestJob); !ok {
		return errors.New("expected RequestJob")
	}
	if err := c.Send(ctx, job); err != nil {
		return err
	}
	return c.Close(ctx)
}

func peer(t *testing.T, url string, tokens ...wire.PeerToken) (*wsconn.WorkerConn, session.Result, error) {
	t.Helper()
	c, err := wsconn.DialServer(ctx, url, wsconn.DialOptions{})
	if err != nil {
		t.Fatal(err)
	}
	role, out := session.NewPeer(session.PeerConfig{WorkerID: workerID, Tokens: session.NewPeerTokens(tokens),
		Capabilities: wire.GradientCapabilities{Fetch: true, Eval: true, Build: true}})
	_, res, err := Run(ctx, c, role, out, nil)
	return c, res, err
}

func TestAuthorityAndPeerHandshakeThenAJobExchange(t *testing.T) {
	d := sessiontest.NewDirectory()
	d.Register(workerID, sessiontest.Project("proj-a"), "tok-a")
	url, ends := server(t, d)
	c, res, err := peer(t, url, wire.PeerToken{PeerID: "proj-a", Token: "tok-a"})
	if err != nil {
		t.Fatal(err)
	}
	if !cmp.Equal(res.Authorized, []string{"proj-a"}) || !res.Capabilities.Build || !res.Capabilities.Core || !res.Capabilities.Cache {
		t.Fatalf("worker's view of the handshake: %+v", res)
	}
	if err := c.Send(ctx, &wire.RequestJob{Kind: wire.JobKindBuild}); err != nil {
		t.Fatal(err)
	}
	m, release, err := c.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if diff := cmp.Diff(job, m); diff != "" {
		t.Fatalf("AssignJob arrived changed (-sent +received):\n%s", diff)
	}
	c.Close(ctx)
	if err := <-ends; err != nil {
		t.Fatalf("server side: %v", err)
	}
}

func TestEachRejectionReachesTheWorkerWithItsCode(t *testing.T) {
	cacheless := sessiontest.Project("proj-nocache")
	cacheless.HasCache = false
	cases := []struct {
		name   string
		setup  func(d *sessiontest.Directory)
		tokens []wire.PeerToken
		code   uint16
		reason string
	}{
		{"unknown worker", func(d *sessiontest.Directory) {}, nil, 403, session.ReasonUnknownWorker},
		{"wrong token", func(d *sessiontest.Directory) { d.Register(workerID, sessiontest.Project("p"), "right") },
			[]wire.PeerToken{{PeerID: "p", Token: "wrong"}}, 401, session.ReasonNoValidTokens},
		{"no cache", func(d *sessiontest.Directory) { d.Register(workerID, cacheless, "t") },
			[]wire.PeerToken{{PeerID: "proj-nocache", Token: "t"}}, 495, session.ReasonNoCache},
		{"already connected", func(d *sessiontest.Directory) {
			d.Register(workerID, sessiontest.Project("p"), "t")
			d.Live[workerID] = true
		}, []wire.PeerToken{{PeerID: "p", Token: "t"}}, 496, session.ReasonAlreadyConnected},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := sessiontest.NewDirectory()
			c.setup(d)
			url, _ := server(t, d)
			_, _, err := peer(t, url, c.tokens...)
			var ended *EndedError
			if !errors.As(err, &ended) || ended.End.Kind != session.EndRejectReceived || ended.End.Code != c.code || ended.End.Reason != c.reason {
				t.Fatalf("err = %v, want a received Reject %d %q", err, c.code, c.reason)
			}
		})
	}
}

// dialedWorker runs the dialed role on a worker's listener and, once running, sends a
// RequestJob and reads the AssignJob back. Results go to done.
func dialedWorker(t *testing.T, accepted sessiontest.ServerTokens) (url string, done chan error) {
	done = make(chan error, 4)
	answer := func(_ context.Context, n session.Need) (session.Event, error) { return accepted.Answer(n), nil }
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := wsconn.AcceptServer(w, r, wsconn.Options{})
		if err != nil {
			done <- err
			return
		}
		role, out := session.NewDialed(session.DialedConfig{WorkerID: workerID, Capabilities: wire.GradientCapabilities{Build: true}})
		if _, _, err = Run(r.Context(), c, role, out, answer); err != nil {
			done <- err
			return
		}
		if err = c.Send(r.Context(), &wire.RequestJob{Kind: wire.JobKindBuild}); err == nil {
			var m wire.ServerMessage
			var release func()
			if m, release, err = c.Read(r.Context()); err == nil {
				release()
				if _, ok := m.(*wire.AssignJob); !ok {
					err = errors.New("expected AssignJob")
				}
			}
		}
		done <- err
	})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return "ws" + strings.TrimPrefix(srv.URL, "http") + "/proto", done
}

func dial(t *testing.T, url string, d *sessiontest.Directory, tokens ...wire.PeerToken) (*wsconn.ServerConn, session.Result, error) {
	t.Helper()
	c, err := wsconn.DialWorker(ctx, url, wsconn.DialOptions{})
	if err != nil {
		t.Fatal(err)
	}
	role, out := session.NewDialer(session.DialerConfig{WorkerID: workerID, Tokens: tokens})
	_, res, err := Run(ctx, c, role, out, directoryAnswerer(d))
	return c, res, err
}

func TestDialerAndDialedHandshakeThenAJobExchange(t *testing.T) {
	url, done := dialedWorker(t, sessiontest.ServerTokens{ByPeer: map[string]string{"proj-a": "tok-a"}})
	d := sessiontest.NewDirectory()
	reg := sessiontest.Project("proj-a")
	reg.HasDialToken = true
	d.Register(workerID, reg, "tok-a")
	c, res, err := dial(t, url, d, wire.PeerToken{PeerID: "proj-a", Token: "tok-a"})
	if err != nil {
		t.Fatal(err)
	}
	if !cmp.Equal(res.Authorized, []string{"proj-a"}) {
		t.Fatalf("server's view: %+v", res)
	}
	m, release, err := c.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	release()
	if _, ok := m.(*wire.RequestJob); !ok {
		t.Fatalf("got %T", m)
	}
	if err := c.Send(ctx, job); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("worker side: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("worker side never finished")
	}
}

func TestDialedWorkerRefusesAWrongServerTokenWith401(t *testing.T) {
	url, done := dialedWorker(t, sessiontest.ServerTokens{ByPeer: map[string]string{"proj-a": "tok-a"}})
	d := sessiontest.NewDirectory()
	d.Register(workerID, sessiontest.Project("proj-a"), "tok-a")
	_, _, err := dial(t, url, d, wire.PeerToken{PeerID: "proj-a", Token: "forged"})
	var ended *EndedError
	if !errors.As(err, &ended) || ended.End.Code != 401 || ended.End.Kind != session.EndRejectReceived {
		t.Fatalf("server side: %v", err)
	}
	if id, reason, keep := session.OfflineReason(ended.End); !keep || id != workerID || !strings.Contains(reason, "401") {
		t.Fatalf("offline reason kept: %v %q %q", keep, id, reason)
	}
	var wEnded *EndedError
	if err := <-done; !errors.As(err, &wEnded) || wEnded.End.Kind != session.EndRejectSent {
		t.Fatalf("worker side: %v", err)
	}
}
