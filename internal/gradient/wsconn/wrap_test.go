package wsconn

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/coder/websocket"

	"github.com/buildfleet/buildfleet/internal/gradient/wire"
)

// NewServerConn over a WebSocket this package did not accept (no batching conn underneath)
// still agrees, reads and writes; the library then flushes every frame itself.
func TestWrappingAForeignWebSocket(t *testing.T) {
	accepted := make(chan *ServerConn, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := websocket.Accept(w, r, nil)
		if err != nil {
			t.Errorf("Accept: %v", err)
			return
		}
		accepted <- NewServerConn(ws, Options{})
	}))
	t.Cleanup(srv.Close)
	worker := dialServer(t, wsURL(srv), DialOptions{})
	server := acceptOne(t, accepted)
	if server.s.bc != nil {
		t.Fatal("a foreign WebSocket got a batching conn")
	}
	agreeBoth(t, worker, server)
	ctx := testCtx(t)
	for i := range 40 { // more than one batch
		if err := server.Send(ctx, &wire.AbortJob{JobID: "j", Reason: string(rune('a' + i%26))}); err != nil {
			t.Fatal(err)
		}
	}
	if got := readLabels(t, worker, 40); len(got) != 40 {
		t.Fatalf("read %d frames", len(got))
	}
}

// Close before anything was sent or read ends the socket without agreement.
func TestCloseBeforeAgreement(t *testing.T) {
	url, accepted := serveWorkers(t, Options{})
	raw := rawDial(t, url)
	reads := raw.reading()
	server := acceptOne(t, accepted)
	if err := server.Close(testCtx(t)); err != nil {
		t.Fatalf("Close: %v", err)
	}
	ce := reads.closed(t)
	if ce.Code != CloseNormal {
		t.Errorf("peer saw close %d, want 1000", ce.Code)
	}
	if _, err := server.Agree(testCtx(t)); !errors.Is(err, ErrClosed) {
		t.Errorf("Agree after Close = %v, want ErrClosed", err)
	}
}

// A peer that vanishes mid-stream ends the socket: Sends fail with ErrClosed and Err says why.
func TestPeerVanishingEndsTheSocket(t *testing.T) {
	url, accepted := serveWorkers(t, Options{})
	raw := rawDial(t, url)
	raw.write(wire.VersionFrame(wire.ProtoVersions()))
	server := acceptOne(t, accepted)
	if _, err := server.Agree(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	raw.Abort()
	var err error
	for seq := uint64(0); err == nil; seq++ {
		err = server.Send(testCtx(t), narPush(seq, wire.BulkChunkSize))
	}
	if !errors.Is(err, ErrClosed) {
		t.Fatalf("Send to a vanished peer = %v, want ErrClosed", err)
	}
	if cause := server.Err(); cause == nil || errors.Is(cause, ErrClosed) {
		t.Errorf("Err = %v, want the write failure", cause)
	}
}
