package server

import (
	"bytes"
	"testing"

	"github.com/buildfleet/buildfleet/internal/gradient/aeadbox"
	"github.com/buildfleet/buildfleet/internal/gradient/repocred"
	"github.com/buildfleet/buildfleet/internal/gradient/store"
)

// The Credential goes out only for a job that fetches a repository whose URL takes the
// kind of credential the project has (gradient-server §13.2).
func TestCredentialOnlyForAFetchWithAMatchingCredential(t *testing.T) {
	box, _ := aeadbox.New(bytes.Repeat([]byte{3}, 32))
	r := newRig(t, Config{Secrets: box})
	key := []byte("-----BEGIN OPENSSH PRIVATE KEY-----\nkey\n-----END OPENSSH PRIVATE KEY-----\n")
	sealedKey, _ := box.Seal(repocred.PurposeSSHKey, key)
	sealedToken, _ := repocred.SealToken(box, "oauth2", []byte("glpat-x"))
	if err := r.st.SetProjectSSHKey(ctx, r.project.ID, sealedKey); err != nil {
		t.Fatal(err)
	}
	if err := r.st.SetProjectHTTPSToken(ctx, r.project.ID, sealedToken); err != nil {
		t.Fatal(err)
	}
	eval := func(url, source string) store.Assignment {
		return store.Assignment{ID: "a", Job: store.EvalJob("e"),
			Eval: &store.EvalAssignment{ProjectID: r.project.ID, RepoURL: url, FlakeSource: source}}
	}
	for _, c := range []struct {
		name string
		a    store.Assignment
		want []byte // nil: no Credential
	}{
		{"ssh fetch", eval("git@forge:o/r.git", ""), key},
		{"https fetch", eval("https://forge/o/r.git", ""), []byte("oauth2\nglpat-x")},
		{"already fetched", eval("git@forge:o/r.git", "/nix/store/s-source"), nil},
		{"a URL without credentials", eval("file:///r", ""), nil},
		{"a build job", store.Assignment{ID: "b", Job: store.BuildJob("b"), Build: &store.BuildAssignment{}}, nil},
	} {
		m, err := r.srv.credentialFor(ctx, c.a)
		switch {
		case err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want == nil && m != nil:
			t.Errorf("%s: sent a Credential", c.name)
		case c.want != nil && (m == nil || !bytes.Equal(m.Data, c.want)):
			t.Errorf("%s: Credential %v, want %d bytes", c.name, m, len(c.want))
		}
	}

	other, _ := aeadbox.New(bytes.Repeat([]byte{4}, 32))
	r.srv.cfg.Secrets = other
	if _, err := r.srv.credentialFor(ctx, eval("git@forge:o/r.git", "")); err == nil {
		t.Error("a key sealed under another secret key opened")
	}
	r.srv.cfg.Secrets = nil
	if _, err := r.srv.credentialFor(ctx, eval("git@forge:o/r.git", "")); err == nil {
		t.Error("a credential was sent without a secret key to open it")
	}
}
