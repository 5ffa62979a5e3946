package api

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/buildfleet/buildfleet/internal/gradient/aeadbox"
	"github.com/buildfleet/buildfleet/internal/gradient/forgestatus"
	"github.com/buildfleet/buildfleet/internal/gradient/store"
)

// maxSecretLen bounds a forge token or webhook secret.
const maxSecretLen = 4096

func (a *api) showProjectStatus(w http.ResponseWriter, r *http.Request) error {
	p, err := a.resolveProject(r.Context(), r.PathValue("project"))
	if err != nil {
		return err
	}
	c, err := a.statusConfig(r.Context(), p.ID)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, projectStatusOf(p.Name, c))
	return nil
}

func (a *api) setProjectStatus(w http.ResponseWriter, r *http.Request) error {
	var req SetProjectStatusRequest
	if err := decodeBody(w, r, &req); err != nil {
		return err
	}
	p, err := a.resolveProject(r.Context(), r.PathValue("project"))
	if err != nil {
		return err
	}
	c, err := a.statusConfig(r.Context(), p.ID)
	if err != nil {
		return err
	}
	if err := a.applyStatusRequest(&c, req); err != nil {
		return err
	}
	if err := a.store.SetStatusConfig(r.Context(), c); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, projectStatusOf(p.Name, c))
	return nil
}

// statusConfig is the project's settings, empty when it has none yet.
func (a *api) statusConfig(ctx context.Context, projectID string) (store.StatusConfig, error) {
	c, err := a.store.GetStatusConfig(ctx, projectID)
	if errors.Is(err, store.ErrNotFound) {
		return store.StatusConfig{ProjectID: projectID}, nil
	}
	return c, err
}

// applyStatusRequest merges req into c, sealing new secrets, and checks the result: a forge
// needs its API URL, repository and token; a webhook its URL and secret.
func (a *api) applyStatusRequest(c *store.StatusConfig, req SetProjectStatusRequest) error {
	if a.sealStatus == nil && (req.Token != nil || req.NotifySecret != nil) {
		return &httpError{http.StatusNotImplemented, CodeNotImplemented, "this server has no key to seal tokens with"}
	}
	if err := a.applyForge(c, req); err != nil {
		return err
	}
	if req.PerBuild != nil {
		c.PerBuild = *req.PerBuild
	}
	return a.applyNotify(c, req)
}

func (a *api) applyForge(c *store.StatusConfig, req SetProjectStatusRequest) error {
	if req.Forge != nil && (*req.Forge == "none" || *req.Forge == "") {
		c.Forge, c.APIURL, c.Repo, c.TokenEnc = "", "", "", nil
		return nil
	}
	if req.Forge != nil {
		f, err := forgestatus.ParseForge(*req.Forge)
		if err != nil {
			return badRequest("forge must be github, gitea, forgejo, gitlab or none")
		}
		c.Forge = string(f)
	}
	if req.APIURL != nil {
		c.APIURL = strings.TrimRight(*req.APIURL, "/")
	}
	if req.Repo != nil {
		c.Repo = *req.Repo
	}
	if req.Token != nil {
		sealed, err := a.sealSecret(aeadbox.PurposeStatusToken, *req.Token, "token")
		if err != nil {
			return err
		}
		c.TokenEnc = sealed
	}
	if c.Forge == "" && (c.APIURL != "" || c.Repo != "" || len(c.TokenEnc) > 0) {
		return badRequest("api_url, repo and token need a forge")
	}
	if c.Forge == "" {
		return nil
	}
	if err := (forgestatus.Target{Forge: forgestatus.Forge(c.Forge), APIURL: c.APIURL, Repo: c.Repo}).Validate(); err != nil {
		return badRequest("forge settings: %v", err)
	}
	if len(c.TokenEnc) == 0 {
		return badRequest("a forge needs a token")
	}
	return nil
}

func (a *api) applyNotify(c *store.StatusConfig, req SetProjectStatusRequest) error {
	if req.NotifyURL != nil {
		if c.NotifyURL = *req.NotifyURL; c.NotifyURL == "" {
			c.NotifySecretEnc = nil
			return nil
		}
		if err := forgestatus.ValidateURL(c.NotifyURL); err != nil || len(c.NotifyURL) > maxURLLen {
			return badRequest("notify_url must be an http(s) URL without credentials, query or fragment")
		}
	}
	if req.NotifySecret != nil {
		sealed, err := a.sealSecret(aeadbox.PurposeNotifySecret, *req.NotifySecret, "notify_secret")
		if err != nil {
			return err
		}
		c.NotifySecretEnc = sealed
	}
	if c.NotifyURL == "" && len(c.NotifySecretEnc) > 0 {
		return badRequest("notify_secret needs a notify_url")
	}
	if c.NotifyURL != "" && len(c.NotifySecretEnc) == 0 {
		return badRequest("a webhook needs a notify_secret")
	}
	return nil
}

// sealSecret checks and seals a secret; its value never appears in an answer or a log.
func (a *api) sealSecret(purpose, secret, field string) ([]byte, error) {
	if secret == "" || len(secret) > maxSecretLen || strings.ContainsAny(secret, "\r\n") {
		return nil, badRequest("%s must be 1 to %d characters on one line", field, maxSecretLen)
	}
	return a.sealStatus(purpose, []byte(secret))
}

func projectStatusOf(name string, c store.StatusConfig) ProjectStatus {
	return ProjectStatus{Project: name, Forge: c.Forge, APIURL: c.APIURL, Repo: c.Repo, TokenSet: len(c.TokenEnc) > 0,
		PerBuild: c.PerBuild, NotifyURL: c.NotifyURL, NotifySecretSet: len(c.NotifySecretEnc) > 0, UpdatedAt: c.UpdatedAt}
}

// evaluationStatuses lists an evaluation's statuses with their delivery state.
func (a *api) evaluationStatuses(ctx context.Context, evalID string) ([]StatusDelivery, error) {
	rows, err := a.store.EvaluationStatuses(ctx, evalID)
	return mapSlice(rows, statusDeliveryOf), err
}

func statusDeliveryOf(o store.OutgoingStatus) StatusDelivery {
	d := StatusDelivery{Sink: o.Sink, Context: o.Context, State: o.State, Description: o.Description, BuildID: o.BuildID,
		Attr: o.Attr, Delivery: o.Outcome, Attempts: o.Attempts, LastError: o.LastError, LastHTTP: o.LastHTTP,
		DeliveredAt: o.DeliveredAt, CreatedAt: o.CreatedAt}
	if d.Delivery == store.StatusQueued {
		d.Delivery, d.NextAttempt = "queued", o.NextAt
	}
	return d
}
