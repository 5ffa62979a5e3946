package wsconn

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/coder/websocket"
	"github.com/google/go-cmp/cmp"

	"github.com/buildfleet/buildfleet/internal/gradient/wire"
)

func assignBuild() *wire.AssignJob {
	return &wire.AssignJob{
		JobID:        "0190f5a2-7c1e-7b3d-9a4e-2f6b8c1d0e9f",
		AssignmentID: "0190f5a2-7c1e-7b3d-9a4e-2f6b8c1d0ea0",
		Job: &wire.BuildJob{
			Builds: []wire.BuildSpec{{
				BuildID: "b1",
				DrvPath: "/nix/store/7h6zq0d2xq9m4v1r8c3k5j2n0p6s4w8y-hello-2.12.1.drv",
				Kind:    wire.BuildSpecKindBuild,
				Outputs: []wire.DerivationOutput{{Name: "out", Path: "/nix/store/8h6zq0d2xq9m4v1r8c3k5j2n0p6s4w8y-hello-2.12.1"}},
			}},
			Requirement: wire.BuildRequirement{Architecture: "x86_64-linux", RequiredFeatures: []string{"kvm"}},
		},
	}
}

// A worker that dialed and a server that accepted exchange RequestJob and AssignJob after
// agreement, both typed for their role.
func TestRequestJobAssignJobExchange(t *testing.T) {
	url, accepted := serveWorkers(t, Options{})
	worker := dialServer(t, url, DialOptions{})
	server := acceptOne(t, accepted)
	ctx := testCtx(t)

	// Agreement is lazy: the worker's first Send waits for the server's version frame, which
	// the server sends on its first Read.
	sent := make(chan error, 1)
	go func() { sent <- worker.Send(ctx, &wire.RequestJob{Kind: wire.JobKindBuild}) }()
	got, release, err := server.Read(ctx)
	if err != nil {
		t.Fatalf("server Read: %v", err)
	}
	release()
	if err := <-sent; err != nil {
		t.Fatalf("worker Send: %v", err)
	}
	if diff := cmp.Diff(wire.ClientMessage(&wire.RequestJob{Kind: wire.JobKindBuild}), got); diff != "" {
		t.Fatalf("server got (-want +got):\n%s", diff)
	}
	server.EnterSession()
	worker.EnterSession()
	want := assignBuild()
	if err := server.Send(ctx, want); err != nil {
		t.Fatalf("server Send: %v", err)
	}
	reply, release, err := worker.Read(ctx)
	if err != nil {
		t.Fatalf("worker Read: %v", err)
	}
	defer release()
	if diff := cmp.Diff(wire.ServerMessage(want), reply); diff != "" {
		t.Errorf("worker got (-want +got):\n%s", diff)
	}
}

// The same over a server-dialed session: the server dials, the worker accepts.
func TestServerDialedExchange(t *testing.T) {
	accepted := make(chan *WorkerConn, 1)
	url := serveFunc(t, func(c *WorkerConn) { accepted <- c })
	server, err := DialWorker(testCtx(t), url, DialOptions{})
	if err != nil {
		t.Fatalf("DialWorker: %v", err)
	}
	t.Cleanup(server.Abort)
	worker := acceptOne(t, accepted)
	ctx := testCtx(t)

	sent := make(chan error, 1)
	go func() { sent <- server.Send(ctx, &wire.Authenticate{WorkerID: "w1"}) }()
	m, release, err := worker.Read(ctx)
	release()
	if err := <-sent; err != nil {
		t.Fatal(err)
	}
	if a, ok := m.(*wire.Authenticate); err != nil || !ok || a.WorkerID != "w1" {
		t.Fatalf("worker Read = %#v, %v", m, err)
	}
	if err := worker.Send(ctx, &wire.InitConnection{ID: "w1"}); err != nil {
		t.Fatal(err)
	}
	reply, release, err := server.Read(ctx)
	release()
	if ic, ok := reply.(*wire.InitConnection); err != nil || !ok || ic.ID != "w1" {
		t.Fatalf("server Read = %#v, %v", reply, err)
	}
}

// Chunk payloads arrive intact through pooled frames (512 KiB) and grown ones (over the pooled
// size), and alias their frame until released.
func TestChunkPayloadsArriveIntact(t *testing.T) {
	url, accepted := serveWorkers(t, Options{})
	worker := dialServer(t, url, DialOptions{})
	server := acceptOne(t, accepted)
	agreeBoth(t, worker, server)
	worker.EnterSession()
	ctx := testCtx(t)
	sizes := []int{0, 100, smallFrameSize, wire.BulkChunkSize, 3 * wire.BulkChunkSize, wire.BulkChunkSize}
	go func() {
		for i, size := range sizes {
			if err := server.Send(ctx, narPush(uint64(i), size)); err != nil {
				t.Errorf("Send: %v", err)
			}
		}
	}()
	var releases []func()
	var held [][]byte
	for i, size := range sizes {
		m, release, err := worker.Read(ctx)
		if err != nil {
			t.Fatalf("Read %d: %v", i, err)
		}
		got := m.(*wire.NarPush)
		if !bytes.Equal(got.Data, narPush(uint64(i), size).Data) || got.Offset != uint64(i) {
			t.Fatalf("chunk %d (%d bytes) arrived damaged", i, size)
		}
		releases = append(releases, release)
		held = append(held, got.Data)
	}
	// Unreleased frames are never reused: every payload is still intact.
	for i, data := range held {
		if !bytes.Equal(data, narPush(uint64(i), sizes[i]).Data) {
			t.Errorf("payload %d changed before its release", i)
		}
	}
	for _, release := range releases {
		release()
		release() // idempotent
	}
}

// A stale release (a second call after the buffer was recycled) must not free the buffer a
// later message now owns.
func TestReleaseIsIdempotent(t *testing.T) {
	fb := &frameBuf{b: make([]byte, 8)}
	first := fb.releaser()
	first()
	second := fb.releaser() // the buffer's next owner
	first()
	if gen := fb.gen.Load(); gen != 1 {
		t.Fatalf("stale release advanced the generation to %d", gen)
	}
	second()
	if gen := fb.gen.Load(); gen != 2 {
		t.Fatalf("owner's release: generation %d, want 2", gen)
	}
}

// gradient-server §10.4: Reject is sent, then the socket closes with 1008 and "<code>
// <reason>".
func TestRejectThenClose(t *testing.T) {
	url, accepted := serveWorkers(t, Options{})
	worker := dialServer(t, url, DialOptions{})
	server := acceptOne(t, accepted)
	ctx := testCtx(t)
	sent := make(chan error, 1)
	go func() { sent <- worker.Send(ctx, &wire.InitConnection{ID: "w1"}) }()
	if _, release, err := server.Read(ctx); err != nil {
		t.Fatal(err)
	} else {
		release()
	}
	if err := <-sent; err != nil {
		t.Fatal(err)
	}
	rejected := make(chan error, 1)
	go func() { rejected <- server.Reject(ctx, 403, "unknown worker") }()

	m, release, err := worker.Read(ctx)
	release()
	if diff := cmp.Diff(wire.ServerMessage(&wire.ServerReject{Code: 403, Reason: "unknown worker"}), m); err != nil || diff != "" {
		t.Fatalf("worker Read = %v (-want +got):\n%s", err, diff)
	}
	_, _, err = worker.Read(ctx)
	var ce websocket.CloseError
	if !errors.As(err, &ce) || ce.Code != ClosePolicyViolation || ce.Reason != "403 unknown worker" {
		t.Fatalf("worker saw %v, want close 1008 \"403 unknown worker\"", err)
	}
	if err := <-rejected; err != nil {
		t.Errorf("Reject: %v", err)
	}
}

func TestRejectCloseReasonFitsACloseFrame(t *testing.T) {
	for _, tc := range []struct{ reason, want string }{
		{"unknown worker", "403 unknown worker"},
		{strings.Repeat("a", 119), "403 " + strings.Repeat("a", 119)},
		{strings.Repeat("a", 120), "403 " + strings.Repeat("a", 119)},
		{strings.Repeat("a", 118) + "é", "403 " + strings.Repeat("a", 118)}, // é would straddle byte 123
	} {
		got := rejectCloseReason(403, tc.reason)
		if got != tc.want || len(got) > maxCloseReason {
			t.Errorf("rejectCloseReason(%q) = %q, want %q", tc.reason, got, tc.want)
		}
	}
}

// Close writes every queued frame before the close frame (1000); afterwards Send fails with
// ErrClosed and nothing blocks.
func TestCloseDrainsThenSendFails(t *testing.T) {
	url, accepted := serveWorkers(t, Options{})
	worker := dialServer(t, url, DialOptions{})
	server := acceptOne(t, accepted)
	agreeBoth(t, worker, server)
	worker.EnterSession()
	ctx := testCtx(t)
	const chunks = BulkLaneSize
	for i := range chunks {
		if err := server.Send(ctx, narPush(uint64(i), wire.BulkChunkSize)); err != nil {
			t.Fatal(err)
		}
	}
	if err := server.Send(ctx, &wire.AbortJob{JobID: "j", Reason: "last"}); err != nil {
		t.Fatal(err)
	}
	closed := make(chan error, 1)
	go func() { closed <- server.Close(ctx) }()

	if got := readUntilClose(t, worker, CloseNormal); got != chunks+1 {
		t.Errorf("worker read %d frames before the close, want %d", got, chunks+1)
	}
	if err := <-closed; err != nil {
		t.Errorf("Close: %v", err)
	}
	assertClosedLocally(t, server)
}

// readUntilClose reads until the socket closes with code and counts the frames read.
func readUntilClose(t *testing.T, c *WorkerConn, code int) int {
	t.Helper()
	for got := 0; ; got++ {
		_, release, err := c.Read(testCtx(t))
		release()
		if err != nil {
			if websocket.CloseStatus(err) != websocket.StatusCode(code) {
				t.Fatalf("Read ended with %v, want close %d", err, code)
			}
			return got
		}
	}
}

// assertClosedLocally checks a socket after its own Close: Send fails with ErrClosed, Close
// again is a no-op, Err and Done report the close.
func assertClosedLocally(t *testing.T, server *ServerConn) {
	t.Helper()
	ctx := testCtx(t)
	if err := server.Send(ctx, &wire.AbortJob{JobID: "j"}); !errors.Is(err, ErrClosed) {
		t.Errorf("Send after Close = %v, want ErrClosed", err)
	}
	if err := server.Close(ctx); err != nil {
		t.Errorf("second Close = %v, want nil", err)
	}
	if !errors.Is(server.Err(), ErrClosed) {
		t.Errorf("Err after Close = %v", server.Err())
	}
	select {
	case <-server.Done():
	default:
		t.Error("Done not closed after Close")
	}
}

// Abort drops the connection; the peer's read fails and later Sends fail with ErrClosed.
func TestAbortDropsTheConnection(t *testing.T) {
	url, accepted := serveWorkers(t, Options{})
	worker := dialServer(t, url, DialOptions{})
	server := acceptOne(t, accepted)
	agreeBoth(t, worker, server)
	server.Abort()
	if _, _, err := worker.Read(testCtx(t)); err == nil {
		t.Fatal("worker Read succeeded after the server aborted")
	}
	if err := worker.Send(testCtx(t), &wire.RequestJob{}); !errors.Is(err, ErrClosed) {
		t.Errorf("worker Send after the peer dropped = %v, want ErrClosed", err)
	}
	if err := server.Send(context.Background(), &wire.AbortJob{}); !errors.Is(err, ErrClosed) {
		t.Errorf("Send after Abort = %v, want ErrClosed", err)
	}
}
