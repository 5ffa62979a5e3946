package server

import (
	"context"
	"net"

	"github.com/buildfleet/buildfleet/internal/gradient/api"
	"github.com/buildfleet/buildfleet/internal/gradient/counter"
	"github.com/buildfleet/buildfleet/internal/gradient/httpfront"
	"github.com/buildfleet/buildfleet/internal/gradient/webui"
)

// WebUIConfig is what the web UI's listener adds to the server's (gradient-server §17).
type WebUIConfig struct {
	Public   bool   // signed-out visitors read projects, evaluations, builds, public caches
	CacheURL string // where Nix reaches the binary cache (the --listen port)
	// Limits bound the UI listener's connections as --listen's are (gradient-server §10.14).
	Limits httpfront.Limits
}

// WebUIFront is the web UI serving on a listener of its own; a nil one (the UI is off) does
// nothing.
type WebUIFront struct {
	front *httpfront.Front
	ui    *webui.UI
}

// ServeWebUI serves the web UI on ln, nil when ln is: the pages, and /api/v1/ wired as on
// --listen with the session cookie admitted on GET and HEAD, so the pages' script reads the
// API on its own origin.
func (s *Server) ServeWebUI(ln net.Listener, c WebUIConfig) *WebUIFront {
	if ln == nil {
		return nil
	}
	ui := webui.New(webui.Config{Store: s.cfg.Store, Live: s, CacheKeys: s.cacheFront.apiKeys(), CacheURL: c.CacheURL,
		Public: c.Public, Logger: s.log, Now: s.now, Rand: s.cfg.Rand})
	cfg := s.apiConfig()
	cfg.Session = ui.SessionKey
	front := httpfront.New(ln, httpfront.Config{Handler: ui.Handler(api.New(cfg)), Limits: c.Limits, Log: s.hostile})
	go front.Serve()
	s.log.Info("web UI ready", "ui", "http://"+ln.Addr().String())
	return &WebUIFront{front: front, ui: ui}
}

// Metrics are the UI's counters for /metrics.
func (f *WebUIFront) Metrics() []counter.Metric {
	if f == nil {
		return nil
	}
	return f.ui.Counters().Metrics()
}

// Shutdown stops the UI's listener (after Server.Shutdown, which ends open log streams).
func (f *WebUIFront) Shutdown(ctx context.Context) error {
	if f == nil {
		return nil
	}
	return f.front.Shutdown(ctx)
}
