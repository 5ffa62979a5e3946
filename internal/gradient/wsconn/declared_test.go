package wsconn_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/hostiletest"
	"github.com/buildfleet/buildfleet/internal/gradient/wire"
	"github.com/buildfleet/buildfleet/internal/gradient/wsconn"
)

// serveReading accepts one /proto connection, runs a read loop on it (entering the session
// after the first message when session is set) and reports the loop's error.
func serveReading(t *testing.T, session bool) (string, <-chan error) {
	t.Helper()
	errs := make(chan error, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := wsconn.AcceptWorker(w, r, wsconn.Options{})
		if err != nil {
			errs <- err
			return
		}
		defer c.Abort()
		ctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
		defer cancel()
		for {
			_, release, err := c.Read(ctx)
			if err != nil {
				errs <- err
				return
			}
			release()
			if session {
				c.EnterSession()
			}
		}
	}))
	t.Cleanup(srv.Close)
	return "ws" + strings.TrimPrefix(srv.URL, "http") + "/proto", errs
}

// gradient-protocol §1.3: a frame header declaring more than the cap closes the socket as
// soon as it arrives, with 1002 during the handshake and 1009 after it, though not one
// payload byte follows; before this a 2^62 header held the connection until the 15 s
// handshake deadline. A header pipelined with the upgrade request is scanned too.
func TestDeclaredOversizeClosesAtOnce(t *testing.T) {
	version := hostiletest.FrameBytes(hostiletest.OpBinary, wire.VersionFrame(wire.ProtoVersions()))
	small := hostiletest.FrameBytes(hostiletest.OpBinary, []byte{19, 1}) // RequestJob{Build}
	tests := []struct {
		name      string
		session   bool
		early     []byte // sent with the upgrade request
		after     []byte // sent once the upgrade is answered
		wantClose int
	}{
		{"2^62 as the first frame", false, nil, hostiletest.Header(hostiletest.OpBinary, 1<<62), wsconn.CloseProtocolError},
		{"64 KiB + 1 after the version frame", false, nil,
			append(version, hostiletest.Header(hostiletest.OpBinary, wire.MaxHandshakeMessageSize+1)...), wsconn.CloseProtocolError},
		{"2^62 pipelined with the upgrade", false, hostiletest.Header(hostiletest.OpBinary, 1<<62), nil, wsconn.CloseProtocolError},
		{"8 MiB + 1 in the session", true, nil,
			append(append(version, small...), hostiletest.Header(hostiletest.OpBinary, wire.MaxProtoMessageSize+1)...), wsconn.CloseMessageTooBig},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			url, errs := serveReading(t, tc.session)
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			r, err := hostiletest.DialRawPipelined(ctx, url, "", tc.early)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if _, err := r.Conn().Write(tc.after); err != nil {
				t.Fatal(err)
			}
			o, err := r.ReadToEnd(ctx)
			if err != nil || o.Close != tc.wantClose || o.Elapsed > 2*time.Second {
				t.Fatalf("outcome %v, %v; want close %d at once", o, err, tc.wantClose)
			}
			if err := <-errs; !errors.Is(err, wsconn.ErrMessageTooBig) {
				t.Fatalf("server read ended with %v, want ErrMessageTooBig", err)
			}
		})
	}
}
