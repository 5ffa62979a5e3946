// Package health is what a gradient worker reports of its own environment: the capabilities
// its Nix cannot serve right now and why, in words an operator can act on. The worker sends
// the report as Gradient-Worker-Unavailable headers on the WebSocket upgrade (its request
// when it dials, its 101 response when the server dials it), so the binary protocol, whose
// v30 shape is fixed, carries nothing new; a worker that sends no header reports nothing
// unavailable. The server shows the report as the worker's quarantine reason. Pure: no I/O.
package health

import (
	"net/http"
	"slices"
	"strings"
)

// Header is the upgrade header that carries one unavailable capability: "build: <reason>".
const Header = "Gradient-Worker-Unavailable"

// Capabilities a report may name: the ones a worker offers (gradient-protocol §5).
const (
	Fetch = "fetch"
	Eval  = "eval"
	Build = "build"
)

var known = []string{Fetch, Eval, Build}

// MaxReason bounds a reason as sent and as accepted: it is worker-supplied text that reaches
// the server's store, logs and API.
const MaxReason = 400

// Unavailable maps a capability to why the worker cannot serve it. Nil or empty: all is well.
type Unavailable map[string]string

// Set writes u into h as one Header line per capability, in a stable order.
func (u Unavailable) Set(h http.Header) {
	h.Del(Header)
	for _, c := range known {
		if reason, ok := u[c]; ok {
			h.Add(Header, c+": "+clean(reason))
		}
	}
}

// Parse reads the report from a peer's upgrade header. Lines naming an unknown capability or
// holding no reason are ignored; reasons are cleaned and cut to MaxReason bytes.
func Parse(h http.Header) Unavailable {
	var u Unavailable
	for _, line := range h.Values(Header) {
		c, reason, ok := strings.Cut(line, ":")
		c, reason = strings.TrimSpace(c), clean(reason)
		if !ok || reason == "" || !slices.Contains(known, c) {
			continue
		}
		if u == nil {
			u = Unavailable{}
		}
		u[c] = reason
	}
	return u
}

// String is the report as one line, capabilities that share a reason named together:
// "fetch, eval, build: nix does not run …" or "eval: <reason>; build: <reason>".
func (u Unavailable) String() string {
	var reasons []string
	caps := map[string][]string{}
	for _, c := range known {
		reason, ok := u[c]
		if !ok {
			continue
		}
		if caps[reason] == nil {
			reasons = append(reasons, reason)
		}
		caps[reason] = append(caps[reason], c)
	}
	parts := make([]string, len(reasons))
	for i, r := range reasons {
		parts[i] = strings.Join(caps[r], ", ") + ": " + r
	}
	return strings.Join(parts, "; ")
}

// clean keeps a reason to one line of printable ASCII (what an HTTP header value may hold),
// with runs of spaces collapsed, at most MaxReason bytes.
func clean(s string) string {
	var b strings.Builder
	space := false
	for _, r := range s {
		if r < 0x20 || r > 0x7e || r == ' ' {
			space = b.Len() > 0
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
		if b.Len() >= MaxReason {
			break
		}
	}
	out := b.String()
	return out[:min(len(out), MaxReason)]
}
