package apiclient

import (
	"context"
	"net/url"

	"github.com/buildfleet/buildfleet/internal/gradient/api"
)

// Upstreams lists a cache's upstream substituters, in the order they are asked
// (gradient-server §14).
func (c *Client) Upstreams(ctx context.Context, cache string) (api.UpstreamList, error) {
	var out api.UpstreamList
	err := c.do(ctx, "GET", "/caches/"+seg(cache)+"/upstreams", nil, &out)
	return out, err
}

// AddUpstream names an upstream of a cache with the public key trusted there, or replaces
// the key of one it names already.
func (c *Client) AddUpstream(ctx context.Context, cache string, req api.AddUpstreamRequest) (api.Upstream, error) {
	var out api.Upstream
	err := c.do(ctx, "PUT", "/caches/"+seg(cache)+"/upstreams", req, &out)
	return out, err
}

// RemoveUpstream removes an upstream of a cache by its URL.
func (c *Client) RemoveUpstream(ctx context.Context, cache, upstreamURL string) error {
	return c.do(ctx, "DELETE", "/caches/"+seg(cache)+"/upstreams?url="+url.QueryEscape(upstreamURL), nil, nil)
}
