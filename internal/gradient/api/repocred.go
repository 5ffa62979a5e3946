package api

import (
	"context"
	"errors"
	"net/http"

	"github.com/buildfleet/buildfleet/internal/gradient/repocred"
	"github.com/buildfleet/buildfleet/internal/gradient/store"
)

// SetSSHKeyRequest sets a project's deploy key from an operator's private key file
// (OpenSSH, PKCS#1, PKCS#8 or SEC1 PEM; no passphrase).
type SetSSHKeyRequest struct {
	PrivateKey string `json:"private_key"`
}

// GenerateSSHKeyRequest makes a new Ed25519 deploy key; it has no fields yet.
type GenerateSSHKeyRequest struct{}

// SSHKey is a project's deploy key as shown: its public half only.
type SSHKey struct {
	Project     string `json:"project"`
	PublicKey   string `json:"public_key"` // authorized_keys form, for the forge's deploy-key page
	Fingerprint string `json:"fingerprint"`
}

// SetHTTPSTokenRequest sets a project's https token; Username "" means
// repocred.DefaultUsername.
type SetHTTPSTokenRequest struct {
	Username string `json:"username,omitempty"`
	Token    string `json:"token"`
}

// HTTPSToken is what is shown of a project's token: that it is set, and its username.
type HTTPSToken struct {
	Project  string `json:"project"`
	Username string `json:"username"`
}

// repoSecrets is the box that seals project credentials, or 501.
func (a *api) repoSecrets() error {
	if a.secrets == nil {
		return &httpError{http.StatusNotImplemented, CodeNotImplemented, "this server keeps no secret key, so it cannot hold repository credentials"}
	}
	return nil
}

func (a *api) generateSSHKey(w http.ResponseWriter, r *http.Request) error {
	var req GenerateSSHKeyRequest
	if err := decodeOptionalBody(w, r, &req); err != nil {
		return err
	}
	return a.storeSSHKey(w, r, func(comment string) ([]byte, error) { return repocred.Generate(a.rand, comment) })
}

func (a *api) setSSHKey(w http.ResponseWriter, r *http.Request) error {
	var req SetSSHKeyRequest
	if err := decodeBody(w, r, &req); err != nil {
		return err
	}
	return a.storeSSHKey(w, r, func(comment string) ([]byte, error) { return repocred.ParseKey([]byte(req.PrivateKey), comment) })
}

// storeSSHKey seals the key mint returns as the project's deploy key and answers its public
// half. The private key never leaves the server.
func (a *api) storeSSHKey(w http.ResponseWriter, r *http.Request, mint func(comment string) ([]byte, error)) error {
	if err := a.repoSecrets(); err != nil {
		return err
	}
	p, err := a.resolveProject(r.Context(), r.PathValue("project"))
	if err != nil {
		return err
	}
	key, err := mint(keyComment(p))
	if errors.Is(err, repocred.ErrInvalid) {
		return badRequest("%v", err)
	}
	if err != nil {
		return err
	}
	defer clear(key)
	pub, err := repocred.AuthorizedKey(key, keyComment(p))
	if err != nil {
		return err
	}
	sealed, err := a.secrets.Seal(repocred.PurposeSSHKey, key)
	if err != nil {
		return err
	}
	if err := a.store.SetProjectSSHKey(r.Context(), p.ID, sealed); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, SSHKey{Project: p.Name, PublicKey: pub.AuthorizedKey, Fingerprint: pub.Fingerprint})
	return nil
}

func keyComment(p store.Project) string { return "gradient-" + p.Name }

func (a *api) showSSHKey(w http.ResponseWriter, r *http.Request) error {
	if err := a.repoSecrets(); err != nil {
		return err
	}
	p, creds, err := a.projectCredentials(r)
	if err != nil {
		return err
	}
	if creds.SSHKeyEnc == nil {
		return notFound("project %q has no deploy key (generate one with `admin project ssh-key generate`)", p.Name)
	}
	key, err := a.secrets.Open(repocred.PurposeSSHKey, creds.SSHKeyEnc)
	if err != nil {
		return err
	}
	defer clear(key)
	pub, err := repocred.AuthorizedKey(key, keyComment(p))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, SSHKey{Project: p.Name, PublicKey: pub.AuthorizedKey, Fingerprint: pub.Fingerprint})
	return nil
}

func (a *api) projectCredentials(r *http.Request) (store.Project, store.SealedCredentials, error) {
	p, err := a.resolveProject(r.Context(), r.PathValue("project"))
	if err != nil {
		return p, store.SealedCredentials{}, err
	}
	creds, err := a.store.ProjectCredentials(r.Context(), p.ID)
	return p, creds, err
}

func (a *api) removeSSHKey(w http.ResponseWriter, r *http.Request) error {
	return a.removeCredential(w, r, a.store.SetProjectSSHKey)
}

func (a *api) removeHTTPSToken(w http.ResponseWriter, r *http.Request) error {
	return a.removeCredential(w, r, a.store.SetProjectHTTPSToken)
}

func (a *api) removeCredential(w http.ResponseWriter, r *http.Request, set func(ctx context.Context, id string, sealed []byte) error) error {
	p, err := a.resolveProject(r.Context(), r.PathValue("project"))
	if err != nil {
		return err
	}
	if err := set(r.Context(), p.ID, nil); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (a *api) setHTTPSToken(w http.ResponseWriter, r *http.Request) error {
	var req SetHTTPSTokenRequest
	if err := decodeBody(w, r, &req); err != nil {
		return err
	}
	if err := a.repoSecrets(); err != nil {
		return err
	}
	p, err := a.resolveProject(r.Context(), r.PathValue("project"))
	if err != nil {
		return err
	}
	token := []byte(req.Token)
	defer clear(token)
	sealed, err := repocred.SealToken(a.secrets, req.Username, token)
	if errors.Is(err, repocred.ErrInvalid) {
		return badRequest("%v", err)
	}
	if err != nil {
		return err
	}
	if err := a.store.SetProjectHTTPSToken(r.Context(), p.ID, sealed); err != nil {
		return err
	}
	user := req.Username
	if user == "" {
		user = repocred.DefaultUsername
	}
	writeJSON(w, http.StatusOK, HTTPSToken{Project: p.Name, Username: user})
	return nil
}
