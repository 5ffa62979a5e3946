package node

import (
	"errors"
	"fmt"
	"net/http"
	"time"
)

// serveAdmin runs the admin HTTP surface: /metrics (Prometheus text) and /healthz (200 while
// the node answers, 503 while it stops), both unauthenticated, and with --dashboard the fleet
// dashboard behind its token (pace-node §10.3). The surface is off unless --admin-listen is
// set, and a bare port binds loopback.
func (n *Node) serveAdmin() {
	mux := http.NewServeMux()
	mux.Handle("/metrics", n.metrics.handler())
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		if n.stopping.Load() {
			http.Error(w, "stopping", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	n.mountDashboard(mux)
	n.admin = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	n.goRun(func() {
		if err := n.admin.Serve(n.adminLn); err != nil && !errors.Is(err, http.ErrServerClosed) {
			n.log.Error("admin surface stopped", "err", err)
		}
	})
}
