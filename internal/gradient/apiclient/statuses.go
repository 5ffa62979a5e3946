package apiclient

import (
	"context"

	"github.com/buildfleet/buildfleet/internal/gradient/api"
)

// ProjectStatus shows a project's commit status and webhook settings (without secrets).
func (c *Client) ProjectStatus(ctx context.Context, project string) (api.ProjectStatus, error) {
	var out api.ProjectStatus
	err := c.do(ctx, "GET", "/projects/"+seg(project)+"/status", nil, &out)
	return out, err
}

// SetProjectStatus changes a project's commit status and webhook settings; absent fields
// keep their value.
func (c *Client) SetProjectStatus(ctx context.Context, project string, req api.SetProjectStatusRequest) (api.ProjectStatus, error) {
	var out api.ProjectStatus
	err := c.do(ctx, "PUT", "/projects/"+seg(project)+"/status", req, &out)
	return out, err
}
