package api_test

import (
	"bytes"
	"net/http"
	"testing"

	"github.com/buildfleet/buildfleet/internal/gradient/aeadbox"
	"github.com/buildfleet/buildfleet/internal/gradient/api"
)

func withStatusSealer(t *testing.T) (func(*api.Config), *aeadbox.Box) {
	box, err := aeadbox.LoadOrCreate(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return func(c *api.Config) { c.SealStatusSecret = box.Seal }, box
}

func str(s string) *string { return &s }

// The settings are stored with the token and secret sealed, shown without them, and checked.
func TestProjectStatusSettings(t *testing.T) {
	seal, box := withStatusSealer(t)
	h := newHarness(t, seal)
	p := got(h.admin.CreateProject(h.ctx, projectReq("demo"))).must(t)
	h.remember("ghp_secret-token")
	h.remember("hook-secret-value")
	on := true
	st := got(h.admin.SetProjectStatus(h.ctx, "demo", api.SetProjectStatusRequest{Forge: str("github"),
		APIURL: str("https://api.github.com/"), Repo: str("acme/app"), Token: str("ghp_secret-token"), PerBuild: &on,
		NotifyURL: str("http://hook.example/in"), NotifySecret: str("hook-secret-value")})).must(t)
	want := api.ProjectStatus{Project: "demo", Forge: "github", APIURL: "https://api.github.com", Repo: "acme/app", TokenSet: true,
		PerBuild: true, NotifyURL: "http://hook.example/in", NotifySecretSet: true, UpdatedAt: st.UpdatedAt}
	if st != want {
		t.Fatalf("set: %+v", st)
	}
	raw := h.raw("GET", api.Prefix+"/projects/demo/status", "Bearer "+h.adminKey, "")
	if raw.status != http.StatusOK || bytes.Contains(raw.body, []byte("ghp_secret")) || bytes.Contains(raw.body, []byte("hook-secret")) {
		t.Fatalf("show: %d %s", raw.status, raw.body)
	}
	c, err := h.store.GetStatusConfig(h.ctx, p.ID)
	if err != nil || bytes.Contains(c.TokenEnc, []byte("ghp_secret")) {
		t.Fatalf("stored %v: token not sealed", err)
	}
	if tok, err := box.Open(aeadbox.PurposeStatusToken, c.TokenEnc); err != nil || string(tok) != "ghp_secret-token" {
		t.Fatalf("sealed token does not open: %v", err)
	}
	// A change of one field keeps the others, the token included.
	st = got(h.admin.SetProjectStatus(h.ctx, "demo", api.SetProjectStatusRequest{Repo: str("acme/other")})).must(t)
	if st.Repo != "acme/other" || !st.TokenSet || st.Forge != "github" {
		t.Fatalf("partial change: %+v", st)
	}
	st = got(h.admin.SetProjectStatus(h.ctx, "demo", api.SetProjectStatusRequest{Forge: str("none"), NotifyURL: str("")})).must(t)
	if st.Forge != "" || st.TokenSet || st.NotifyURL != "" || st.NotifySecretSet {
		t.Fatalf("turned off: %+v", st)
	}
}

func TestProjectStatusRefusals(t *testing.T) {
	seal, _ := withStatusSealer(t)
	h := newHarness(t, seal)
	got(h.admin.CreateProject(h.ctx, projectReq("demo"))).must(t)
	path := api.Prefix + "/projects/demo/status"
	for name, body := range map[string]string{
		"unknown forge":       `{"forge":"bitbucket"}`,
		"forge without token": `{"forge":"github","api_url":"https://api.github.com","repo":"a/b"}`,
		"bad api url":         `{"forge":"github","api_url":"ftp://x","repo":"a/b","token":"t"}`,
		"bad repo":            `{"forge":"gitea","api_url":"https://g.example","repo":"ab","token":"t"}`,
		"multi-line token":    `{"forge":"github","api_url":"https://api.github.com","repo":"a/b","token":"a\nb"}`,
		"webhook no secret":   `{"notify_url":"http://h.example/x"}`,
		"webhook bad url":     `{"notify_url":"http://u:p@h.example/x","notify_secret":"s"}`,
		"token without forge": `{"token":"t"}`,
	} {
		t.Run(name, func(t *testing.T) { h.expectRefusal("PUT", path, body, http.StatusBadRequest, api.CodeBadRequest) })
	}
	h.expectRefusal("PUT", api.Prefix+"/projects/nope/status", `{}`, http.StatusNotFound, api.CodeNotFound)
	unsealed := newHarness(t)
	got(unsealed.admin.CreateProject(unsealed.ctx, projectReq("demo"))).must(t)
	unsealed.expectRefusal("PUT", path, `{"forge":"github","api_url":"https://api.github.com","repo":"a/b","token":"t"}`,
		http.StatusNotImplemented, api.CodeNotImplemented)
}
