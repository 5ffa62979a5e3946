package worker_test

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/buildfleet/buildfleet/internal/gradient/nixexec"
	"github.com/buildfleet/buildfleet/internal/gradient/peertoken"
	"github.com/buildfleet/buildfleet/internal/gradient/session"
	"github.com/buildfleet/buildfleet/internal/gradient/wire"
	"github.com/buildfleet/buildfleet/internal/gradient/worker"
	"github.com/buildfleet/buildfleet/internal/gradient/wsconn"
)

// listening is a worker in discoverable mode on a loopback port, offering fetch only so that
// a running session needs no nix.
type listening struct {
	t    *testing.T
	id   string
	url  string
	logs *lockedBuffer
	done chan error
	stop context.CancelFunc
}

type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startListening starts the listener; tokensFile "" runs without a tokens file.
func startListening(t *testing.T, tokensFile string) *listening {
	t.Helper()
	l := &listening{t: t, id: uuid.Must(uuid.NewV7()).String(), logs: &lockedBuffer{}, done: make(chan error, 1)}
	w, err := worker.New(worker.Config{BaseDir: t.TempDir(), WorkerID: l.id, AcceptedServerTokensFile: tokensFile,
		Offer:  wire.GradientCapabilities{Fetch: true},
		Nix:    nixexec.New(nixexec.Options{GCRootDir: t.TempDir()}),
		Logger: slog.New(slog.NewTextHandler(l.logs, nil)), MetricsInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l.url = "ws://" + ln.Addr().String() + "/proto"
	ctx, stop := context.WithCancel(context.Background())
	l.stop = stop
	go func() { l.done <- w.Listen(ctx, ln) }()
	t.Cleanup(func() {
		stop()
		if err := <-l.done; err != nil {
			t.Errorf("Listen: %v", err)
		}
	})
	return l
}

// dial connects as the server would.
func (l *listening) dial() *wsconn.ServerConn {
	l.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := wsconn.DialWorker(ctx, l.url, wsconn.DialOptions{})
	if err != nil {
		l.t.Fatal(err)
	}
	l.t.Cleanup(func() { c.Abort() })
	return c
}

// first sends m and returns the worker's answer.
func (l *listening) first(c *wsconn.ServerConn, m wire.ServerMessage) wire.ClientMessage {
	l.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := c.Send(ctx, m); err != nil {
		l.t.Fatal(err)
	}
	got, release, err := c.Read(ctx)
	if err != nil {
		l.t.Fatalf("reading the worker's answer: %v", err)
	}
	release()
	return got
}

func wantReject(t *testing.T, got wire.ClientMessage, code uint16, reason string) {
	t.Helper()
	r, ok := got.(*wire.ClientReject)
	if !ok || r.Code != code || r.Reason != reason {
		t.Fatalf("answer %#v, want Reject %d %q", got, code, reason)
	}
}

func tokensFile(t *testing.T, lines ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "accepted-server-tokens")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func argon2Hash(t *testing.T, token string) string {
	t.Helper()
	h, err := peertoken.HashArgon2id(token, strings.NewReader(strings.Repeat("salt", 8)))
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestListenerRefusals covers gradient-protocol §4.1 as_dialed: 400 for another first
// message, 401 for another worker ID, a wrong token, or one wrong token among right ones.
func TestListenerRefusals(t *testing.T) {
	file := tokensFile(t, "# servers", "proj-a:"+peertoken.SHA256Hex("right-a"), "proj-b:"+argon2Hash(t, "right-b"))
	l := startListening(t, file)
	cases := []struct {
		name   string
		msg    wire.ServerMessage
		code   uint16
		reason string
	}{
		{"another first message", &wire.InitAck{}, session.CodeUnexpected, session.ReasonExpectedAuthenticate},
		{"another worker ID", &wire.Authenticate{WorkerID: uuid.Must(uuid.NewV7()).String(),
			Tokens: []wire.PeerToken{{PeerID: "proj-a", Token: "right-a"}}}, session.CodeUnauthorized, session.ReasonWrongWorkerOrToken},
		{"a wrong sha256 token", &wire.Authenticate{WorkerID: l.id,
			Tokens: []wire.PeerToken{{PeerID: "proj-a", Token: "wrong"}}}, session.CodeUnauthorized, session.ReasonWrongWorkerOrToken},
		{"a wrong argon2 token", &wire.Authenticate{WorkerID: l.id,
			Tokens: []wire.PeerToken{{PeerID: "proj-b", Token: "right-a"}}}, session.CodeUnauthorized, session.ReasonWrongWorkerOrToken},
		{"one wrong among right", &wire.Authenticate{WorkerID: l.id,
			Tokens: []wire.PeerToken{{PeerID: "proj-a", Token: "right-a"}, {PeerID: "proj-c", Token: "right-a"}}},
			session.CodeUnauthorized, session.ReasonWrongWorkerOrToken},
		{"no token", &wire.Authenticate{WorkerID: l.id}, session.CodeUnauthorized, session.ReasonWrongWorkerOrToken},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := l.dial()
			wantReject(t, l.first(c, tc.msg), tc.code, tc.reason)
			c.Close(context.Background()) // answers the worker's close
		})
	}
	if !strings.Contains(l.logs.String(), "refused a server") {
		t.Errorf("refusals not logged:\n%s", l.logs)
	}
}

// TestListenerAcceptsRightTokens: every token verifying (sha256 and argon2 lines) gets
// InitConnection; InitAck starts the same job loop as a worker-dialed session.
func TestListenerAcceptsRightTokens(t *testing.T) {
	file := tokensFile(t, "proj-a:"+peertoken.SHA256Hex("right-a"), "proj-b:"+argon2Hash(t, "right-b"))
	l := startListening(t, file)
	c := l.dial()
	got := l.first(c, &wire.Authenticate{WorkerID: l.id,
		Tokens: []wire.PeerToken{{PeerID: "proj-a", Token: "right-a"}, {PeerID: "proj-b", Token: "right-b"}}})
	init, ok := got.(*wire.InitConnection)
	if !ok || init.ID != l.id || !init.Capabilities.Fetch || init.Capabilities.Build {
		t.Fatalf("answer %#v, want InitConnection from %s offering fetch", got, l.id)
	}
	runSession(t, c)
	if !strings.Contains(l.logs.String(), "server session running") {
		t.Errorf("session start not logged:\n%s", l.logs)
	}
}

// runSession acks the handshake and waits for the job loop's first messages.
func runSession(t *testing.T, c *wsconn.ServerConn) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	c.EnterSession()
	ack := &wire.InitAck{Capabilities: wire.GradientCapabilities{Fetch: true}, AuthorizedPeers: []string{"proj-a"}}
	if err := c.Send(ctx, ack); err != nil {
		t.Fatal(err)
	}
	for {
		m, release, err := c.Read(ctx)
		if err != nil {
			t.Fatalf("waiting for RequestJob: %v", err)
		}
		release()
		if r, ok := m.(*wire.RequestJob); ok && r.Kind == wire.JobKindFlake {
			return
		}
	}
}

// TestListenerWildcardLine: a `*` line matches a token for any peer.
func TestListenerWildcardLine(t *testing.T) {
	l := startListening(t, tokensFile(t, "*:"+peertoken.SHA256Hex("shared")))
	got := l.first(l.dial(), &wire.Authenticate{WorkerID: l.id,
		Tokens: []wire.PeerToken{{PeerID: "any-project", Token: "shared"}, {PeerID: "any-cache", Token: "shared"}}})
	if _, ok := got.(*wire.InitConnection); !ok {
		t.Fatalf("answer %#v, want InitConnection", got)
	}
	wantReject(t, l.first(l.dial(), &wire.Authenticate{WorkerID: l.id,
		Tokens: []wire.PeerToken{{PeerID: "any-project", Token: "other"}}}), session.CodeUnauthorized, session.ReasonWrongWorkerOrToken)
}

// TestListenerWithoutTokensFile accepts any server and warns at start, but still refuses
// another worker ID.
func TestListenerWithoutTokensFile(t *testing.T) {
	l := startListening(t, "")
	got := l.first(l.dial(), &wire.Authenticate{WorkerID: l.id, Tokens: []wire.PeerToken{{PeerID: "p", Token: "anything"}}})
	if _, ok := got.(*wire.InitConnection); !ok {
		t.Fatalf("answer %#v, want InitConnection", got)
	}
	if !strings.Contains(l.logs.String(), "every server that dials this worker is accepted") {
		t.Errorf("no warning at start:\n%s", l.logs)
	}
	wantReject(t, l.first(l.dial(), &wire.Authenticate{WorkerID: "someone-else", Tokens: []wire.PeerToken{{PeerID: "p", Token: "x"}}}),
		session.CodeUnauthorized, session.ReasonWrongWorkerOrToken)
}

// TestListenerOneSessionAtATime: while a server session runs, another dial is refused
// before the upgrade.
func TestListenerOneSessionAtATime(t *testing.T) {
	l := startListening(t, "")
	c := l.dial()
	l.first(c, &wire.Authenticate{WorkerID: l.id, Tokens: []wire.PeerToken{{PeerID: "p", Token: "t"}}})
	runSession(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := wsconn.DialWorker(ctx, l.url, wsconn.DialOptions{})
	if err == nil || !strings.Contains(err.Error(), "503") {
		t.Fatalf("second dial: %v, want a 503 refusal", err)
	}
}

// TestListenerReloadsTokensFile: a hash added while listening admits its server at once.
func TestListenerReloadsTokensFile(t *testing.T) {
	file := tokensFile(t, "proj-a:"+peertoken.SHA256Hex("old"))
	l := startListening(t, file)
	auth := &wire.Authenticate{WorkerID: l.id, Tokens: []wire.PeerToken{{PeerID: "proj-a", Token: "new"}}}
	wantReject(t, l.first(l.dial(), auth), session.CodeUnauthorized, session.ReasonWrongWorkerOrToken)
	if err := os.WriteFile(file, []byte("proj-a:"+peertoken.SHA256Hex("new")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := l.first(l.dial(), auth); fmtType(got) != "*wire.InitConnection" {
		t.Fatalf("after the file changed: %#v, want InitConnection", got)
	}
}

// TestListenRefusesMalformedTokensFile: a bad line stops the listener before it serves.
func TestListenRefusesMalformedTokensFile(t *testing.T) {
	w, err := worker.New(worker.Config{BaseDir: t.TempDir(), WorkerID: "w",
		AcceptedServerTokensFile: tokensFile(t, "proj-a:"+peertoken.SHA256Hex("x"), "proj-b:not-a-hash"),
		Nix:                      nixexec.New(nixexec.Options{GCRootDir: t.TempDir()})})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	err = w.Listen(context.Background(), ln)
	if !errors.Is(err, worker.ErrBadServerTokensFile) || !strings.Contains(err.Error(), "line 2") {
		t.Fatalf("Listen: %v, want ErrBadServerTokensFile at line 2", err)
	}
	if _, err := net.Dial("tcp", ln.Addr().String()); err == nil {
		t.Fatalf("the listener still accepts connections")
	}
}
