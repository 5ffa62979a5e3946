package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"

	"github.com/buildfleet/buildfleet/internal/gradient/peertoken"
	"github.com/buildfleet/buildfleet/internal/gradient/store"
)

// RegistrationWatcher is implemented by a LiveView that acts on registration changes: a new
// registration or cache subscription makes a connected worker reauthenticate
// (gradient-protocol §4.3), and deactivating its last registration ends its session with
// 403. The API calls it after every change that may concern workerID; a LiveView without it
// learns of changes at the worker's next connect.
type RegistrationWatcher interface {
	RegistrationChanged(workerID string)
}

// peer is the registering side of a registration request: a project or a cache.
type peer struct {
	id, name, kind string
	needsCache     bool // a project without a cache subscription is refused with 495 (gradient-protocol §4.4)
}

func (a *api) projectPeer(r *http.Request) (peer, error) {
	p, err := a.resolveProject(r.Context(), r.PathValue("project"))
	return peer{id: p.ID, name: p.Name, kind: "project", needsCache: true}, err
}

func (a *api) cachePeer(r *http.Request) (peer, error) {
	c, err := a.resolveCache(r.Context(), r.PathValue("cache"))
	return peer{id: c.ID, name: c.Name, kind: "cache"}, err
}

func (a *api) registerProjectWorker(w http.ResponseWriter, r *http.Request) error {
	return a.withPeer(w, r, a.projectPeer, a.register)
}

func (a *api) registerCacheWorker(w http.ResponseWriter, r *http.Request) error {
	return a.withPeer(w, r, a.cachePeer, a.register)
}

func (a *api) setProjectRegistrationActive(w http.ResponseWriter, r *http.Request) error {
	return a.withPeer(w, r, a.projectPeer, a.setRegistrationActive)
}

func (a *api) setCacheRegistrationActive(w http.ResponseWriter, r *http.Request) error {
	return a.withPeer(w, r, a.cachePeer, a.setRegistrationActive)
}

func (a *api) withPeer(w http.ResponseWriter, r *http.Request, find func(*http.Request) (peer, error),
	then func(http.ResponseWriter, *http.Request, peer) error) error {
	p, err := find(r)
	if err != nil {
		return err
	}
	return then(w, r, p)
}

// register creates a registration with a fresh token, stores only the token's argon2id hash,
// and answers with the token this one time.
func (a *api) register(w http.ResponseWriter, r *http.Request, p peer) error {
	req, workerID, err := decodeRegistration(w, r)
	if err != nil {
		return err
	}
	if req.URL != "" && a.seal == nil {
		return &httpError{http.StatusNotImplemented, CodeNotImplemented,
			"server-dialed registrations (url) need a dial-token key, which this server does not have"}
	}
	nr := store.NewRegistration{PeerID: p.id, WorkerID: workerID, URL: req.URL, DisplayName: req.DisplayName,
		EnableFetch: orTrue(req.EnableFetch), EnableEval: orTrue(req.EnableEval), EnableBuild: orTrue(req.EnableBuild)}
	token, err := a.mintToken(&nr)
	if err != nil {
		return err
	}
	reg, err := a.store.CreateRegistration(r.Context(), nr)
	switch {
	case errors.Is(err, store.ErrConflict):
		return conflict(CodeConflict, "worker %s is already registered for %s %q", workerID, p.kind, p.name)
	case errors.Is(err, store.ErrWorkerIDTaken):
		return conflict(CodeWorkerIDTaken, "worker %s is a team worker; it cannot also be registered", workerID)
	case err != nil:
		return err
	}
	resp := RegisterWorkerResponse{Registration: registrationOf(reg, map[string]string{p.id: p.name}),
		Token: token, PeersFileLine: p.id + ":" + token}
	if resp.Warnings, err = a.registrationWarnings(r.Context(), p); err != nil {
		return err
	}
	a.registrationChanged(workerID)
	writeJSON(w, http.StatusCreated, resp)
	return nil
}

// mintToken creates the registration's token and fills in what the store keeps of it: the
// argon2id hash, and for a server-dialed worker the sealed token.
func (a *api) mintToken(nr *store.NewRegistration) (string, error) {
	token, err := peertoken.Mint(a.rand)
	if err != nil {
		return "", err
	}
	if nr.TokenHash, err = peertoken.HashArgon2id(token, a.rand); err != nil {
		return "", err
	}
	if nr.URL != "" {
		if nr.TokenEnc, err = a.seal(token); err != nil {
			return "", fmt.Errorf("seal dial token: %w", err)
		}
	}
	return token, nil
}

func decodeRegistration(w http.ResponseWriter, r *http.Request) (RegisterWorkerRequest, string, error) {
	var req RegisterWorkerRequest
	if err := decodeBody(w, r, &req); err != nil {
		return req, "", err
	}
	workerID, err := canonicalWorkerID(req.WorkerID)
	if err == nil {
		err = checkText("display_name", req.DisplayName, false, maxTextLen)
	}
	if err == nil && req.URL != "" {
		err = checkDialURL(req.URL)
	}
	return req, workerID, err
}

// registrationWarnings says what will stop the new registration from working.
func (a *api) registrationWarnings(ctx context.Context, p peer) ([]string, error) {
	if !p.needsCache {
		return nil, nil
	}
	caches, err := a.store.CachesOfProjects(ctx, []string{p.id})
	if err != nil || len(caches) > 0 {
		return nil, err
	}
	return []string{fmt.Sprintf("project %q has no cache subscribed: the worker will be refused (495) until it has one", p.name)}, nil
}

func (a *api) setRegistrationActive(w http.ResponseWriter, r *http.Request, p peer) error {
	workerID, active, err := activeRequest(w, r)
	if err != nil {
		return err
	}
	err = a.store.SetRegistrationActive(r.Context(), p.id, workerID, active)
	if errors.Is(err, store.ErrNotFound) {
		return notFound("worker %s is not registered for %s %q", workerID, p.kind, p.name)
	}
	if err != nil {
		return err
	}
	a.registrationChanged(workerID)
	regs, err := a.store.ListRegistrations(r.Context(), workerID)
	if err != nil {
		return err
	}
	i := slices.IndexFunc(regs, func(reg store.Registration) bool { return reg.PeerID == p.id })
	if i < 0 {
		return notFound("worker %s is not registered for %s %q", workerID, p.kind, p.name)
	}
	writeJSON(w, http.StatusOK, registrationOf(regs[i], map[string]string{p.id: p.name}))
	return nil
}

func (a *api) listRegistrations(w http.ResponseWriter, r *http.Request) error {
	workerID := r.URL.Query().Get("worker")
	if workerID != "" {
		var err error
		if workerID, err = canonicalWorkerID(workerID); err != nil {
			return err
		}
	}
	regs, err := a.store.ListRegistrations(r.Context(), workerID)
	if err != nil {
		return err
	}
	names, err := a.peerNames(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, RegistrationList{Registrations: mapSlice(regs, func(reg store.Registration) Registration {
		return registrationOf(reg, names)
	})})
	return nil
}

// peerNames maps every project and cache ID to its name.
func (a *api) peerNames(ctx context.Context) (map[string]string, error) {
	ps, err := a.store.ListProjects(ctx)
	if err != nil {
		return nil, err
	}
	cs, err := a.store.ListCaches(ctx)
	if err != nil {
		return nil, err
	}
	names := make(map[string]string, len(ps)+len(cs))
	for _, p := range ps {
		names[p.ID] = p.Name
	}
	for _, c := range cs {
		names[c.ID] = c.Name
	}
	return names, nil
}

// registrationChanged tells a LiveView that watches registrations.
func (a *api) registrationChanged(workerIDs ...string) {
	if rw, ok := a.live.(RegistrationWatcher); ok {
		for _, id := range workerIDs {
			rw.RegistrationChanged(id)
		}
	}
}

func orTrue(b *bool) bool { return b == nil || *b }

// projectWorkersChanged tells a watching LiveView about every worker that may serve the
// project (its registrations and its granted teams' workers): a cache subscription changes
// what their sessions may do (gradient-protocol §4.3, gradient-protocol §4.4 step 4).
func (a *api) projectWorkersChanged(ctx context.Context, projectID string) error {
	if _, ok := a.live.(RegistrationWatcher); !ok {
		return nil
	}
	ids, err := a.projectWorkerIDs(ctx, projectID)
	if err != nil {
		return err
	}
	a.registrationChanged(ids...)
	return nil
}

// activeRequest reads a PATCH turning a worker on or off: the {worker} of the path and the
// body's required "active".
func activeRequest(w http.ResponseWriter, r *http.Request) (workerID string, active bool, err error) {
	if workerID, err = canonicalWorkerID(r.PathValue("worker")); err != nil {
		return "", false, err
	}
	var req SetActiveRequest
	if err := decodeBody(w, r, &req); err != nil {
		return "", false, err
	}
	if req.Active == nil {
		return "", false, badRequest(`"active" is required`)
	}
	return workerID, *req.Active, nil
}
