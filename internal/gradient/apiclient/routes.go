package apiclient

import (
	"context"
	"fmt"
	"net/url"
	"strconv"

	"github.com/buildfleet/buildfleet/internal/gradient/api"
)

// PeerKind names what registers a worker.
type PeerKind string

// Peer kinds with their path segment.
const (
	ProjectPeer PeerKind = "projects"
	CachePeer   PeerKind = "caches"
)

// Peer is a project or cache, by ID or name.
type Peer struct {
	Kind PeerKind
	Ref  string
}

func (p Peer) path() (string, error) {
	if p.Kind != ProjectPeer && p.Kind != CachePeer {
		return "", fmt.Errorf("%w: peer kind %q", ErrBadConfig, p.Kind)
	}
	return "/" + string(p.Kind) + "/" + seg(p.Ref), nil
}

// ListProjects lists every project.
func (c *Client) ListProjects(ctx context.Context) ([]api.Project, error) {
	var out api.ProjectList
	err := c.do(ctx, "GET", "/projects", nil, &out)
	return out.Projects, err
}

// CreateProject creates a project.
func (c *Client) CreateProject(ctx context.Context, req api.CreateProjectRequest) (api.Project, error) {
	var out api.Project
	err := c.do(ctx, "POST", "/projects", req, &out)
	return out, err
}

// Project shows a project (by ID or name) with its subscribed caches.
func (c *Client) Project(ctx context.Context, ref string) (api.Project, error) {
	var out api.Project
	err := c.do(ctx, "GET", "/projects/"+seg(ref), nil, &out)
	return out, err
}

// SetProjectTriggers changes what a project follows and how it hears of pushes
// (gradient-server §11); fields left nil keep their value.
func (c *Client) SetProjectTriggers(ctx context.Context, project string, req api.SetTriggersRequest) (api.ProjectTriggers, error) {
	var out api.ProjectTriggers
	err := c.do(ctx, "PATCH", "/projects/"+seg(project)+"/triggers", req, &out)
	return out, err
}

// Subscribe subscribes a project to a cache (idempotent).
func (c *Client) Subscribe(ctx context.Context, project, cache string) error {
	return c.do(ctx, "PUT", "/projects/"+seg(project)+"/caches/"+seg(cache), nil, nil)
}

// Unsubscribe removes a project's cache subscription.
func (c *Client) Unsubscribe(ctx context.Context, project, cache string) error {
	return c.do(ctx, "DELETE", "/projects/"+seg(project)+"/caches/"+seg(cache), nil, nil)
}

// ListCaches lists the caches the key may see.
func (c *Client) ListCaches(ctx context.Context) ([]api.Cache, error) {
	var out api.CacheList
	err := c.do(ctx, "GET", "/caches", nil, &out)
	return out.Caches, err
}

// CreateCache creates a cache.
func (c *Client) CreateCache(ctx context.Context, req api.CreateCacheRequest) (api.Cache, error) {
	var out api.Cache
	err := c.do(ctx, "POST", "/caches", req, &out)
	return out, err
}

// Cache shows a cache by ID or name.
func (c *Client) Cache(ctx context.Context, ref string) (api.Cache, error) {
	var out api.Cache
	err := c.do(ctx, "GET", "/caches/"+seg(ref), nil, &out)
	return out, err
}

// CachePaths lists what a cache holds, newest first (limit <= 0: the server's default).
func (c *Client) CachePaths(ctx context.Context, ref string, limit int) (api.CachePathList, error) {
	var out api.CachePathList
	q := ""
	if limit > 0 {
		q = "?limit=" + strconv.Itoa(limit)
	}
	err := c.do(ctx, "GET", "/caches/"+seg(ref)+"/paths"+q, nil, &out)
	return out, err
}

// RegisterWorker registers a worker ID for a peer; the answer holds the token, shown once.
func (c *Client) RegisterWorker(ctx context.Context, p Peer, req api.RegisterWorkerRequest) (api.RegisterWorkerResponse, error) {
	var out api.RegisterWorkerResponse
	path, err := p.path()
	if err == nil {
		err = c.do(ctx, "POST", path+"/registrations", req, &out)
	}
	return out, err
}

// SetRegistrationActive deactivates or reactivates a worker's registration with a peer.
func (c *Client) SetRegistrationActive(ctx context.Context, p Peer, workerID string, active bool) (api.Registration, error) {
	var out api.Registration
	path, err := p.path()
	if err == nil {
		err = c.do(ctx, "PATCH", path+"/registrations/"+seg(workerID), api.SetActiveRequest{Active: &active}, &out)
	}
	return out, err
}

// Registrations lists registrations, of one worker ID when workerID is not empty.
func (c *Client) Registrations(ctx context.Context, workerID string) ([]api.Registration, error) {
	path := "/registrations"
	if workerID != "" {
		path += "?worker=" + url.QueryEscape(workerID)
	}
	var out api.RegistrationList
	err := c.do(ctx, "GET", path, nil, &out)
	return out.Registrations, err
}

// Workers lists the workers, live or offline.
func (c *Client) Workers(ctx context.Context) ([]api.Worker, error) {
	var out api.WorkerList
	err := c.do(ctx, "GET", "/workers", nil, &out)
	return out.Workers, err
}

// Worker shows one worker with its registrations.
func (c *Client) Worker(ctx context.Context, workerID string) (api.Worker, error) {
	var out api.Worker
	err := c.do(ctx, "GET", "/workers/"+seg(workerID), nil, &out)
	return out, err
}

// StartEvaluation queues an evaluation of a project at a commit.
func (c *Client) StartEvaluation(ctx context.Context, project string, req api.StartEvaluationRequest) (api.Evaluation, error) {
	var out api.Evaluation
	err := c.do(ctx, "POST", "/projects/"+seg(project)+"/evaluations", req, &out)
	return out, err
}

// Evaluations lists a project's evaluations, newest first (limit <= 0: the server's default).
func (c *Client) Evaluations(ctx context.Context, project string, limit int) ([]api.Evaluation, error) {
	path := "/projects/" + seg(project) + "/evaluations"
	if limit > 0 {
		path += "?limit=" + strconv.Itoa(limit)
	}
	var out api.EvaluationList
	err := c.do(ctx, "GET", path, nil, &out)
	return out.Evaluations, err
}

// Evaluation shows an evaluation with its builds and messages.
func (c *Client) Evaluation(ctx context.Context, id string) (api.EvaluationDetail, error) {
	var out api.EvaluationDetail
	err := c.do(ctx, "GET", "/evaluations/"+seg(id), nil, &out)
	return out, err
}

// AbortEvaluation aborts an unfinished evaluation.
func (c *Client) AbortEvaluation(ctx context.Context, id, reason string) (api.AbortResponse, error) {
	var out api.AbortResponse
	err := c.do(ctx, "POST", "/evaluations/"+seg(id)+"/abort", api.AbortRequest{Reason: reason}, &out)
	return out, err
}

// Build shows a build with its attempts.
func (c *Client) Build(ctx context.Context, id string) (api.BuildDetail, error) {
	var out api.BuildDetail
	err := c.do(ctx, "GET", "/builds/"+seg(id), nil, &out)
	return out, err
}

// AbortBuild aborts an unfinished build.
func (c *Client) AbortBuild(ctx context.Context, id, reason string) (api.AbortResponse, error) {
	var out api.AbortResponse
	err := c.do(ctx, "POST", "/builds/"+seg(id)+"/abort", api.AbortRequest{Reason: reason}, &out)
	return out, err
}

// APIKeys lists the API keys (never the keys themselves).
func (c *Client) APIKeys(ctx context.Context) ([]api.APIKey, error) {
	var out api.APIKeyList
	err := c.do(ctx, "GET", "/api-keys", nil, &out)
	return out.APIKeys, err
}

// CreateAPIKey creates a key; the answer holds the key, shown once.
func (c *Client) CreateAPIKey(ctx context.Context, req api.CreateAPIKeyRequest) (api.CreateAPIKeyResponse, error) {
	var out api.CreateAPIKeyResponse
	err := c.do(ctx, "POST", "/api-keys", req, &out)
	return out, err
}

// RevokeAPIKey revokes a key by ID.
func (c *Client) RevokeAPIKey(ctx context.Context, id string) error {
	return c.do(ctx, "DELETE", "/api-keys/"+seg(id), nil, nil)
}
