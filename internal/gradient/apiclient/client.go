// Package apiclient is a typed Go client of gradient-server's administration API (package
// api, /api/v1): one method per route, the API's own JSON types, and refusals as *Error
// carrying the HTTP status and the API's error code. It sends the key as
// `Authorization: GRAD<key>` and never puts it in an error or a log line.
package apiclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/buildfleet/buildfleet/internal/gradient/api"
)

// maxJSONBody bounds a decoded answer; the largest (an evaluation with its builds) is far
// below it.
const maxJSONBody = 64 << 20

// ErrBadConfig: the base URL or the key cannot work.
var ErrBadConfig = errors.New("apiclient: bad configuration")

// Error is a refusal from the API: the HTTP status and the body's code and message.
type Error struct {
	Status  int
	Code    string
	Message string
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s (HTTP %d, %s)", e.Message, e.Status, e.Code)
}

// StatusOf returns the HTTP status of an *Error in err's chain, or 0.
func StatusOf(err error) int {
	var e *Error
	if errors.As(err, &e) {
		return e.Status
	}
	return 0
}

// Client calls one server with one API key. It is safe for concurrent use.
type Client struct {
	base string // scheme://host[:port][/prefix], no trailing slash
	auth string
	http *http.Client
}

// Option changes a Client.
type Option func(*Client)

// WithHTTPClient sets the HTTP client (timeouts, transport); http.DefaultClient otherwise.
func WithHTTPClient(h *http.Client) Option { return func(c *Client) { c.http = h } }

// New returns a client of the server at baseURL (http or https, e.g. http://127.0.0.1:3000)
// presenting key, which must look like GRAD<key>.
func New(baseURL, key string, opts ...Option) (*Client, error) {
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%w: server URL %q must be http:// or https:// with a host", ErrBadConfig, baseURL)
	}
	if !strings.HasPrefix(key, "GRAD") || len(key) == len("GRAD") || strings.ContainsAny(key, " \t\r\n") {
		return nil, fmt.Errorf("%w: the API key must have the form GRAD<key>", ErrBadConfig)
	}
	c := &Client{base: strings.TrimRight(u.String(), "/"), auth: key, http: http.DefaultClient}
	for _, opt := range opts {
		opt(c)
	}
	return c, nil
}

// do sends one request and decodes a JSON answer into out (nil: discard the body).
func (c *Client) do(ctx context.Context, method, path string, in, out any) error {
	resp, err := c.send(ctx, method, path, in)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if out == nil {
		io.Copy(io.Discard, io.LimitReader(resp.Body, maxJSONBody))
		return nil
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxJSONBody)).Decode(out); err != nil {
		return fmt.Errorf("%s %s: decode answer: %w", method, path, err)
	}
	return nil
}

// send performs the request and turns a non-2xx answer into *Error. The caller closes the
// body of a successful answer.
func (c *Client) send(ctx context.Context, method, path string, in any) (*http.Response, error) {
	var body io.Reader
	if in != nil {
		data, err := json.Marshal(in)
		if err != nil {
			return nil, fmt.Errorf("%s %s: encode request: %w", method, path, err)
		}
		body = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+api.Prefix+path, body)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	req.Header.Set("Authorization", c.auth)
	req.Header.Set("Accept", "application/json")
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	if resp.StatusCode/100 != 2 {
		defer resp.Body.Close()
		return nil, errorOf(resp)
	}
	return resp, nil
}

// errorOf reads the API's error body, or describes a non-API answer (a proxy's page).
func errorOf(resp *http.Response) error {
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var body api.Error
	if json.Unmarshal(data, &body) == nil && body.Code != "" {
		return &Error{Status: resp.StatusCode, Code: body.Code, Message: body.Message}
	}
	return &Error{Status: resp.StatusCode, Code: "http", Message: "unexpected answer: " + resp.Status}
}

// seg escapes one path segment.
func seg(s string) string { return url.PathEscape(s) }
