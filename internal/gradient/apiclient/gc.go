package apiclient

import (
	"context"

	"github.com/buildfleet/buildfleet/internal/gradient/api"
)

// CollectGarbage runs a collection of the server's cache; a dry run only lists what would
// go (gradient-server §15).
func (c *Client) CollectGarbage(ctx context.Context, dryRun bool) (api.GCReport, error) {
	var out api.GCReport
	err := c.do(ctx, "POST", "/gc", api.GCRequest{DryRun: dryRun}, &out)
	return out, err
}
