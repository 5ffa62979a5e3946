package server

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/buildfleet/buildfleet/internal/gradient/aeadbox"
	"github.com/buildfleet/buildfleet/internal/gradient/handshake"
	"github.com/buildfleet/buildfleet/internal/gradient/peertoken"
	"github.com/buildfleet/buildfleet/internal/gradient/session"
	"github.com/buildfleet/buildfleet/internal/gradient/store"
	"github.com/buildfleet/buildfleet/internal/gradient/wire"
	"github.com/buildfleet/buildfleet/internal/gradient/wsconn"
)

func TestDialBackoffDoublesToTheCapAndResets(t *testing.T) {
	var b dialBackoff
	var lows, highs []time.Duration
	for range 9 {
		lows = append(lows, b.failed(0))
	}
	b = dialBackoff{}
	for range 9 {
		highs = append(highs, b.failed(0.999999999))
	}
	s := time.Second
	wantLow := []time.Duration{s / 2, s, 2 * s, 4 * s, 8 * s, 16 * s, 30 * s, 30 * s, 30 * s}
	wantHigh := []time.Duration{s, 2 * s, 4 * s, 8 * s, 16 * s, 32 * s, 60 * s, 60 * s, 60 * s}
	if !slices.Equal(lows, wantLow) {
		t.Errorf("no jitter: %v, want %v", lows, wantLow)
	}
	for i := range highs {
		if highs[i] < wantHigh[i]-time.Millisecond || highs[i] > wantHigh[i] {
			t.Errorf("full jitter, failure %d: %v, want about %v", i+1, highs[i], wantHigh[i])
		}
	}
	if d := b.served(0); d != s/2 {
		t.Errorf("after a served session: %v, want 500ms", d)
	}
	if d := b.failed(0); d != s/2 {
		t.Errorf("a failure after a served session starts over: %v, want 500ms", d)
	}
}

// TestDialBackoffStaysWithinItsBounds: whatever the outcomes and jitter, a wait is at least
// half a second, at most the cap, and never below half the ceiling reached.
func TestDialBackoffStaysWithinItsBounds(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var b dialBackoff
		for i, n := 0, rapid.IntRange(1, 40).Draw(t, "steps"); i < n; i++ {
			jitter := rapid.Float64Range(-1, 2).Draw(t, "jitter") // out-of-range jitter is clamped
			var d time.Duration
			if rapid.Bool().Draw(t, "served") {
				d = b.served(jitter)
			} else {
				d = b.failed(jitter)
				if d < b.ceiling/2 || d > b.ceiling {
					t.Fatalf("wait %v outside [%v, %v]", d, b.ceiling/2, b.ceiling)
				}
			}
			if d < dialMinBackoff/2 || d > dialMaxBackoff {
				t.Fatalf("wait %v outside [%v, %v]", d, dialMinBackoff/2, dialMaxBackoff)
			}
		}
	})
}

// fakeDialed is a discoverable worker for the dialer to dial: it runs the real dialed role
// and accepts the tokens it is told to.
type fakeDialed struct {
	t        *testing.T
	id, url  string
	mu       sync.Mutex
	accept   map[string]string  // peer -> token this worker accepts
	auths    [][]wire.PeerToken // every Authenticate's tokens, in order
	sessions chan *wsconn.WorkerConn
}

func newFakeDialed(t *testing.T, id string) *fakeDialed {
	f := &fakeDialed{t: t, id: id, accept: map[string]string{}, sessions: make(chan *wsconn.WorkerConn, 8)}
	hs := httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(hs.Close)
	f.url = "ws" + strings.TrimPrefix(hs.URL, "http") + "/proto"
	return f
}

func (f *fakeDialed) setAccepted(peer, token string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.accept[peer] = token
}

func (f *fakeDialed) serve(w http.ResponseWriter, r *http.Request) {
	c, err := wsconn.AcceptServer(w, r, wsconn.Options{})
	if err != nil {
		return
	}
	role, out := session.NewDialed(session.DialedConfig{WorkerID: f.id, Capabilities: wire.GradientCapabilities{Fetch: true}})
	if _, _, err := handshake.Run(context.Background(), c, role, out, f.verify); err != nil {
		return
	}
	f.t.Cleanup(func() { c.Abort() })
	f.sessions <- c
}

func (f *fakeDialed) verify(_ context.Context, n session.Need) (session.Event, error) {
	v := n.(session.VerifyTokens)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.auths = append(f.auths, slices.Clone(v.Tokens))
	var valid []string
	for _, tok := range v.Tokens {
		if want, ok := f.accept[tok.PeerID]; ok && want == tok.Token {
			valid = append(valid, tok.PeerID)
		}
	}
	return session.TokensAnswer{Valid: valid}, nil
}

func (f *fakeDialed) lastAuth() []wire.PeerToken {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.auths) == 0 {
		return nil
	}
	return f.auths[len(f.auths)-1]
}

// nextSession waits for the server's next accepted session.
func (f *fakeDialed) nextSession() *peer {
	f.t.Helper()
	select {
	case c := <-f.sessions:
		return &peer{t: f.t, c: c}
	case <-time.After(20 * time.Second):
		f.t.Fatalf("the server never dialed %s; its dials: %d", f.id, len(f.auths))
		return nil
	}
}

func newSecretBox(t *testing.T) *aeadbox.Box { return mustBox(t, strings.Repeat("k", 32)) }

// registerDialed registers workerID at url for peerID with a sealed dial token.
func (r *rig) registerDialed(box *aeadbox.Box, peerID, workerID, url, token string) {
	r.t.Helper()
	enc, err := box.Seal(aeadbox.PurposeDialToken, []byte(token))
	if err != nil {
		r.t.Fatal(err)
	}
	_, err = r.st.CreateRegistration(ctx, store.NewRegistration{PeerID: peerID, WorkerID: workerID,
		TokenHash: peertoken.SHA256Hex(token), TokenEnc: enc, URL: url, EnableFetch: true, EnableEval: true, EnableBuild: true})
	if err != nil {
		r.t.Fatal(err)
	}
}

// offlineReason is the worker's stored offline reason ("" when it has none or no row).
func (r *rig) offlineReason(workerID string) string {
	workers, err := r.st.ListWorkers(ctx)
	if err != nil {
		r.t.Fatal(err)
	}
	if i := slices.IndexFunc(workers, func(w store.WorkerInfo) bool { return w.WorkerID == workerID }); i >= 0 {
		return workers[i].OfflineReason
	}
	return ""
}

// TestTheServerDialsARegisteredWorker (gradient-protocol §4.1 as_dialer): Authenticate
// carries the registration's token, and the session then runs like an inbound one; a
// worker's reauth is answered with AuthUpdate alone (gradient-protocol §4.3).
func TestTheServerDialsARegisteredWorker(t *testing.T) {
	box := newSecretBox(t)
	r := newRig(t, Config{Secrets: box})
	f := newFakeDialed(t, "w-dialed")
	f.setAccepted(r.project.ID, "dial-token")
	r.registerDialed(box, r.project.ID, f.id, f.url, "dial-token")
	p := f.nextSession()
	if got := f.lastAuth(); !slices.Equal(got, []wire.PeerToken{{PeerID: r.project.ID, Token: "dial-token"}}) {
		t.Fatalf("Authenticate tokens for %v, want the project's", len(got))
	}
	eventually(t, "the session to be live", func() bool { return r.srv.sessions.get(f.id) != nil })
	p.send(&wire.RequestJobList{})
	if m, ok := p.next().(*wire.JobListChunk); !ok || !m.IsFinal {
		t.Fatalf("RequestJobList answered with %#v", m)
	}
	p.send(&wire.ReauthRequest{})
	if m, ok := p.next().(*wire.AuthUpdate); !ok || !slices.Equal(m.AuthorizedPeers, []string{r.project.ID}) {
		t.Fatalf("ReauthRequest answered with %#v, want AuthUpdate alone", m)
	}
	if live := r.srv.LiveWorkers()[f.id]; !slices.Equal(live.Authorized, []string{r.project.ID}) {
		t.Fatalf("live worker %+v", live)
	}
}

// TestAWorkerRefusingTheTokenKeeps401AsItsOfflineReason: the dialed worker's Reject is the
// offline reason, the server dials again with backoff, and once the worker accepts the token
// the session runs.
func TestAWorkerRefusingTheTokenKeeps401AsItsOfflineReason(t *testing.T) {
	box := newSecretBox(t)
	r := newRig(t, Config{Secrets: box})
	f := newFakeDialed(t, "w-refusing")
	f.setAccepted(r.project.ID, "another-token")
	r.registerDialed(box, r.project.ID, f.id, f.url, "dial-token")
	want := "rejected by peer: 401 " + session.ReasonWrongWorkerOrToken
	eventually(t, "the refusal as offline reason", func() bool { return r.offlineReason(f.id) == want })
	workers, err := r.st.ListWorkers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if i := slices.IndexFunc(workers, func(w store.WorkerInfo) bool { return w.WorkerID == f.id }); i < 0 || workers[i].OfflineReason != want {
		t.Fatalf("stored offline reason: %+v", workers)
	}
	f.setAccepted(r.project.ID, "dial-token")
	f.nextSession()
	eventually(t, "the session to be live", func() bool { return r.srv.sessions.get(f.id) != nil })
}

// TestDialFailuresAreOfflineReasons: an unreachable URL and a token the server cannot open
// are kept as reasons, without the token.
func TestDialFailuresAreOfflineReasons(t *testing.T) {
	box := newSecretBox(t)
	r := newRig(t, Config{Secrets: box})
	ln := httptest.NewServer(http.NotFoundHandler())
	dead := "ws" + strings.TrimPrefix(ln.URL, "http") + "/proto"
	ln.Close()
	r.registerDialed(box, r.project.ID, "w-unreachable", dead, "secret-token-1")
	r.registerDialed(mustBox(t, strings.Repeat("x", 32)), r.project.ID, "w-foreign-key", "ws://127.0.0.1:9/proto", "secret-token-2")
	eventually(t, "both reasons", func() bool {
		return strings.HasPrefix(r.offlineReason("w-unreachable"), "dial failed: ") &&
			strings.Contains(r.offlineReason("w-foreign-key"), "does not open")
	})
	for _, id := range []string{"w-unreachable", "w-foreign-key"} {
		if reason := r.offlineReason(id); strings.Contains(reason, "secret-token") {
			t.Fatalf("offline reason of %s shows the token: %q", id, reason)
		}
	}
}

func mustBox(t *testing.T, key string) *aeadbox.Box {
	b, err := aeadbox.New([]byte(key))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestANewRegistrationRedialsWithItsToken (gradient-protocol §4.3): a registration added
// while the server-dialed session runs closes it, and the next dial carries both tokens.
func TestANewRegistrationRedialsWithItsToken(t *testing.T) {
	box := newSecretBox(t)
	r := newRig(t, Config{Secrets: box})
	f := newFakeDialed(t, "w-growing")
	second := r.newProject("second")
	f.setAccepted(r.project.ID, "token-1")
	f.setAccepted(second.ID, "token-2")
	r.registerDialed(box, r.project.ID, f.id, f.url, "token-1")
	first := f.nextSession()
	r.registerDialed(box, second.ID, f.id, f.url, "token-2")
	if _, err := first.read(15 * time.Second); err == nil {
		for { // drain what the session still sends until it closes
			if _, err := first.read(15 * time.Second); err != nil {
				break
			}
		}
	}
	f.nextSession()
	got := f.lastAuth()
	peers := []string{got[0].PeerID, got[len(got)-1].PeerID}
	if len(got) != 2 || !sameSet(peers, []string{r.project.ID, second.ID}) {
		t.Fatalf("redial carried %d tokens for %v", len(got), peers)
	}
	eventually(t, "both projects live", func() bool {
		return sameSet(r.srv.LiveWorkers()[f.id].Authorized, []string{r.project.ID, second.ID})
	})
}
