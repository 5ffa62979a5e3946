package handshake_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/handshake"
	"github.com/buildfleet/buildfleet/internal/gradient/hostiletest"
	"github.com/buildfleet/buildfleet/internal/gradient/session"
	"github.com/buildfleet/buildfleet/internal/gradient/wire"
	"github.com/buildfleet/buildfleet/internal/gradient/wsconn"
)

// gradient-protocol §1.4: every first message that does not decode is answered Error{400,
// "malformed message"} and a close, and Run reports the decode error; before this the socket
// was dropped with neither. The socket layer's refusals (a text frame, a header declaring
// 2^62 bytes) close with their codes, also at once.
func TestMalformedFirstMessages(t *testing.T) {
	for _, fm := range hostiletest.FirstMessages() {
		t.Run(fm.Name, func(t *testing.T) {
			ends := make(chan error, 1)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				c, err := wsconn.AcceptWorker(w, r, wsconn.Options{})
				if err != nil {
					ends <- err
					return
				}
				role, out := session.NewAuthority(session.AuthorityConfig{AcceptInbound: true})
				_, _, err = handshake.Run(r.Context(), c, role, out, nil)
				ends <- err
			}))
			defer srv.Close()
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			o, err := fm.Run(ctx, "ws"+strings.TrimPrefix(srv.URL, "http")+"/proto", "")
			if err != nil {
				t.Fatal(err)
			}
			if err := fm.Check(o); err != nil {
				t.Fatal(err)
			}
			if o.Elapsed > 3*time.Second {
				t.Fatalf("closed after %v, not at once", o.Elapsed)
			}
			runErr := <-ends
			var de *wire.DecodeError
			if fm.WantError != errors.As(runErr, &de) {
				t.Fatalf("Run = %v; a decode error %v", runErr, fm.WantError)
			}
		})
	}
}
