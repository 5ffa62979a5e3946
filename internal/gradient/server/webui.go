package server

import (
	"net/http"

	"github.com/buildfleet/buildfleet/internal/gradient/api"
	"github.com/buildfleet/buildfleet/internal/gradient/webui"
)

// WebUIConfig is what the web UI's listener adds to the server's (gradient-server §17).
type WebUIConfig struct {
	Public   bool   // signed-out visitors read projects, evaluations, builds, public caches
	CacheURL string // where Nix reaches the binary cache (the --listen port)
}

// WebUI is the web UI's handler for a listener of its own: the pages, and /api/v1/ with the
// session cookie admitted on GET and HEAD, so the pages' script reads the API on its origin.
func (s *Server) WebUI(c WebUIConfig) (http.Handler, *webui.UI) {
	ui := webui.New(webui.Config{Store: s.cfg.Store, Live: s, CacheKeys: s.cacheFront.apiKeys(), CacheURL: c.CacheURL,
		Public: c.Public, Logger: s.log, Now: s.now, Rand: s.cfg.Rand})
	cfg := s.apiConfig()
	cfg.Session = ui.SessionKey
	return ui.Handler(api.New(cfg)), ui
}
