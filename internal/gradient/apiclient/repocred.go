package apiclient

import (
	"context"

	"github.com/buildfleet/buildfleet/internal/gradient/api"
)

// GenerateSSHKey gives a project a new Ed25519 deploy key and returns its public half
// (gradient-server §13.1).
func (c *Client) GenerateSSHKey(ctx context.Context, project string) (api.SSHKey, error) {
	var out api.SSHKey
	err := c.do(ctx, "POST", "/projects/"+seg(project)+"/ssh-key/generate", api.GenerateSSHKeyRequest{}, &out)
	return out, err
}

// SetSSHKey sets a project's deploy key from a private key file's contents.
func (c *Client) SetSSHKey(ctx context.Context, project string, privateKey []byte) (api.SSHKey, error) {
	var out api.SSHKey
	err := c.do(ctx, "PUT", "/projects/"+seg(project)+"/ssh-key", api.SetSSHKeyRequest{PrivateKey: string(privateKey)}, &out)
	return out, err
}

// SSHKey shows a project's deploy key: its public half.
func (c *Client) SSHKey(ctx context.Context, project string) (api.SSHKey, error) {
	var out api.SSHKey
	err := c.do(ctx, "GET", "/projects/"+seg(project)+"/ssh-key", nil, &out)
	return out, err
}

// RemoveSSHKey removes a project's deploy key.
func (c *Client) RemoveSSHKey(ctx context.Context, project string) error {
	return c.do(ctx, "DELETE", "/projects/"+seg(project)+"/ssh-key", nil, nil)
}

// SetHTTPSToken sets a project's https token (username "" for the default).
func (c *Client) SetHTTPSToken(ctx context.Context, project, username string, token []byte) (api.HTTPSToken, error) {
	var out api.HTTPSToken
	err := c.do(ctx, "PUT", "/projects/"+seg(project)+"/https-token", api.SetHTTPSTokenRequest{Username: username, Token: string(token)}, &out)
	return out, err
}

// RemoveHTTPSToken removes a project's https token.
func (c *Client) RemoveHTTPSToken(ctx context.Context, project string) error {
	return c.do(ctx, "DELETE", "/projects/"+seg(project)+"/https-token", nil, nil)
}
