package api_test

import (
	"net/http"
	"testing"

	"github.com/buildfleet/buildfleet/internal/gradient/api"
)

const testUpstreamKey = "cache.nixos.org-1:6NCHdD59X431o0gWypbMrAURkbJ16ZPMQFGspcDShjY="

// gradient-server §14: a cache's upstreams are added (URL and key checked), listed in the
// order they are asked, re-keyed by adding the same URL, and removed.
func TestCacheUpstreams(t *testing.T) {
	h := newHarness(t)
	if _, err := h.admin.CreateCache(h.ctx, api.CreateCacheRequest{Name: "main"}); err != nil {
		t.Fatal(err)
	}
	added := got(h.admin.AddUpstream(h.ctx, "main", api.AddUpstreamRequest{URL: "https://cache.nixos.org/", PublicKey: testUpstreamKey})).must(t)
	if added.URL != "https://cache.nixos.org" || added.PublicKey != testUpstreamKey {
		t.Fatalf("added %+v", added)
	}
	got(h.admin.AddUpstream(h.ctx, "main", api.AddUpstreamRequest{URL: "file:///srv/up", PublicKey: testUpstreamKey})).must(t)
	list := got(h.admin.Upstreams(h.ctx, "main")).must(t)
	if len(list.Upstreams) != 2 || list.Upstreams[0].URL != "https://cache.nixos.org" || list.Upstreams[1].URL != "file:///srv/up" {
		t.Fatalf("list %+v", list)
	}
	for _, body := range []string{
		`{"url":"ftp://x.example","public_key":"` + testUpstreamKey + `"}`,
		`{"url":"https://u:p@x.example","public_key":"` + testUpstreamKey + `"}`,
		`{"url":"https://x.example","public_key":"k:AAAA"}`,
		`{"url":"https://x.example","public_key":""}`,
	} {
		h.expectRefusal("PUT", "/api/v1/caches/main/upstreams", body, http.StatusBadRequest, api.CodeBadRequest)
	}
	h.expectRefusal("PUT", "/api/v1/caches/nope/upstreams", `{"url":"https://x.example","public_key":"`+testUpstreamKey+`"}`,
		http.StatusNotFound, api.CodeNotFound)
	if err := h.admin.RemoveUpstream(h.ctx, "main", "https://cache.nixos.org/"); err != nil {
		t.Fatal(err)
	}
	if err := h.admin.RemoveUpstream(h.ctx, "main", "https://cache.nixos.org"); err == nil {
		t.Fatal("removing it again succeeded")
	}
	if list := got(h.admin.Upstreams(h.ctx, "main")).must(t); len(list.Upstreams) != 1 {
		t.Fatalf("after remove: %+v", list)
	}
}
