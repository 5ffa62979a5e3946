package api_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/buildfleet/buildfleet/internal/gradient/aeadbox"
	"github.com/buildfleet/buildfleet/internal/gradient/api"
	"github.com/buildfleet/buildfleet/internal/gradient/repocred"
)

func credentialHarness(t *testing.T) (*harness, *aeadbox.Box, api.Project) {
	box, err := aeadbox.New(bytes.Repeat([]byte{9}, 32))
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, func(c *api.Config) { c.RepoSecrets = box })
	p, err := h.admin.CreateProject(h.ctx, api.CreateProjectRequest{Name: "private", RepoURL: "git@forge.example:o/r.git", Wildcards: []string{"packages.*"}})
	if err != nil {
		t.Fatal(err)
	}
	return h, box, p
}

// A generated deploy key is stored sealed; the API only ever shows its public half, the same
// one the key given back by the store derives.
func TestGeneratedDeployKeyIsSealedAndShownPublicOnly(t *testing.T) {
	h, box, p := credentialHarness(t)
	gen, err := h.admin.GenerateSSHKey(h.ctx, "private")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(gen.PublicKey, "ssh-ed25519 ") || !strings.HasSuffix(gen.PublicKey, " gradient-private") {
		t.Fatalf("public key %q", gen.PublicKey)
	}
	shown, err := h.admin.SSHKey(h.ctx, p.ID)
	if err != nil || shown != gen {
		t.Fatalf("show = %+v, %v; generate gave %+v", shown, err, gen)
	}
	sealed, err := h.store.ProjectCredentials(h.ctx, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(sealed.SSHKeyEnc, []byte("PRIVATE KEY")) {
		t.Fatal("the deploy key is stored in the clear")
	}
	c, err := repocred.Open(box, p.RepoURL, repocred.Sealed{SSHKeyEnc: sealed.SSHKeyEnc})
	if err != nil {
		t.Fatal(err)
	}
	h.remember(string(c.Secret))
	if pub, err := repocred.AuthorizedKey(c.Secret, "gradient-private"); err != nil || pub.AuthorizedKey != gen.PublicKey {
		t.Fatalf("the stored key's public half %q, %v", pub.AuthorizedKey, err)
	}
	if err := h.admin.RemoveSSHKey(h.ctx, "private"); err != nil {
		t.Fatal(err)
	}
	h.expectRefusal("GET", "/api/v1/projects/private/ssh-key", "", 404, api.CodeNotFound)
}

func TestSetDeployKeyFromAFile(t *testing.T) {
	h, _, _ := credentialHarness(t)
	path := filepath.Join(t.TempDir(), "id")
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", path).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v %s", err, out)
	}
	key, _ := os.ReadFile(path)
	h.remember(string(key))
	got, err := h.admin.SetSSHKey(h.ctx, "private", key)
	if err != nil {
		t.Fatal(err)
	}
	pub, _ := os.ReadFile(path + ".pub")
	if fields := strings.Fields(string(pub)); !strings.HasPrefix(got.PublicKey, fields[0]+" "+fields[1]+" ") {
		t.Fatalf("public key %q, ssh-keygen's %q", got.PublicKey, pub)
	}
	e := h.expectRefusal("PUT", "/api/v1/projects/private/ssh-key", `{"private_key":"ssh-ed25519 AAAA not private"}`, 400, api.CodeBadRequest)
	if !strings.Contains(e.Message, "not a private key") {
		t.Errorf("refusal %q", e.Message)
	}
}

func TestHTTPSTokenIsSealedAndNeverShown(t *testing.T) {
	h, box, p := credentialHarness(t)
	const token = "glpat-0123456789abcdef"
	h.remember(token)
	got, err := h.admin.SetHTTPSToken(h.ctx, "private", "oauth2", []byte(token))
	if err != nil || got.Username != "oauth2" {
		t.Fatalf("set = %+v, %v", got, err)
	}
	sealed, err := h.store.ProjectCredentials(h.ctx, p.ID)
	if err != nil || len(sealed.HTTPSTokenEnc) == 0 || bytes.Contains(sealed.HTTPSTokenEnc, []byte(token)) {
		t.Fatalf("stored token %v (in the clear: %v)", err, bytes.Contains(sealed.HTTPSTokenEnc, []byte(token)))
	}
	c, err := repocred.Open(box, "https://forge.example/o/r.git", repocred.Sealed{HTTPSTokenEnc: sealed.HTTPSTokenEnc})
	if err != nil || string(c.Secret) != token || c.Username != "oauth2" {
		t.Fatalf("opened %+v, %v", c, err)
	}
	h.expectRefusal("PUT", "/api/v1/projects/private/https-token", `{"token":"two words"}`, 400, api.CodeBadRequest)
	h.expectRefusal("PUT", "/api/v1/projects/nope/https-token", `{"token":"t"}`, 404, api.CodeNotFound)
	if err := h.admin.RemoveHTTPSToken(h.ctx, "private"); err != nil {
		t.Fatal(err)
	}
}

func TestCredentialRoutesNeedTheSecretKey(t *testing.T) {
	h := newHarness(t)
	if _, err := h.admin.CreateProject(h.ctx, api.CreateProjectRequest{Name: "p", RepoURL: "git@h:r", Wildcards: []string{"packages.*"}}); err != nil {
		t.Fatal(err)
	}
	h.expectRefusal("POST", "/api/v1/projects/p/ssh-key/generate", "", 501, api.CodeNotImplemented)
	h.expectRefusal("PUT", "/api/v1/projects/p/https-token", `{"token":"t"}`, 501, api.CodeNotImplemented)
}
