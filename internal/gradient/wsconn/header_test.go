package wsconn

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// Each side sees the header its peer sent with the upgrade: the acceptor the request's, the
// dialer the 101 response's.
func TestPeerHeaderIsWhatThePeerSentWithTheUpgrade(t *testing.T) {
	url, accepted := serveWorkers(t, Options{})
	worker := dialServer(t, url, DialOptions{Header: http.Header{"X-From-Worker": {"w"}}})
	server := acceptOne(t, accepted)
	if got := server.PeerHeader().Get("X-From-Worker"); got != "w" {
		t.Errorf("the accepting server saw %q, want the worker's request header", got)
	}
	if worker.PeerHeader() == nil {
		t.Error("the dialing worker has no response header")
	}

	got := make(chan string, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-From-Listener", "l")
		c, err := AcceptServer(w, r, Options{})
		if err != nil {
			t.Errorf("AcceptServer: %v", err)
			return
		}
		got <- c.PeerHeader().Get("X-From-Server")
		c.Abort()
	}))
	t.Cleanup(srv.Close)
	dialer, err := DialWorker(testCtx(t), wsURL(srv), DialOptions{Header: http.Header{"X-From-Server": {"s"}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(dialer.Abort)
	if h := dialer.PeerHeader().Get("X-From-Listener"); h != "l" {
		t.Errorf("the dialing server saw %q, want the listening worker's response header", h)
	}
	if h := <-got; h != "s" {
		t.Errorf("the listening worker saw %q, want the server's request header", h)
	}
}
