package worker

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"

	"github.com/buildfleet/buildfleet/internal/gradient/nixexec"
	"github.com/buildfleet/buildfleet/internal/gradient/wire"
)

// download fetches one upstream NAR from the url the server answered (http, https, or a
// file visible on this machine) into the job directory, within the transfer timeout, no
// longer than its listed file size (or the NAR's size plus room for a compressor's
// overhead) and checked against its listed file hash. The NAR hash, which the upstream's
// key signed, is checked again when the path is imported (gradient-server §14).
func (r *run) download(ctx context.Context, p, rawURL string, c wire.CachedPath) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, r.s.w.cfg.TransferTimeout)
	defer cancel()
	src, err := openURL(ctx, rawURL)
	if err != nil {
		return "", fmt.Errorf("%w: %s: %w", errNoSubstitute, p, err)
	}
	defer src.Close()
	narSize, _ := c.NarSize.Get()
	limit := narSize + narSize/8 + 1<<20
	if size, ok := c.FileSize.Get(); ok {
		limit = size
	}
	name := filepath.Join(r.dir, "subst-"+filepath.Base(p))
	f, err := os.Create(name)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(f, h), io.LimitReader(src, int64(limit)+1))
	switch {
	case err != nil:
		return "", fmt.Errorf("%w: %s: %w", errNoSubstitute, p, err)
	case uint64(n) > limit:
		return "", fmt.Errorf("%w: %s: NAR file over %d bytes", errNoSubstitute, p, limit)
	}
	if size, ok := c.FileSize.Get(); ok && uint64(n) != size {
		return "", fmt.Errorf("%w: %s: NAR file of %d bytes, listed %d", errNoSubstitute, p, n, size)
	}
	if fh, ok := c.FileHash.Get(); ok {
		want, err := nixexec.ParseSHA256(fh)
		if err != nil || !bytes.Equal(h.Sum(nil), want) {
			return "", fmt.Errorf("%w: %s: NAR file hash %s, listed %s", errNoSubstitute, p, nixexec.SHA256Text(h.Sum(nil)), fh)
		}
	}
	return name, f.Close()
}

// openURL opens an upstream NAR by its http, https or file url.
func openURL(ctx context.Context, rawURL string) (io.ReadCloser, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, err
	}
	switch u.Scheme {
	case "file":
		return os.Open(u.Path)
	case "http", "https":
	default:
		return nil, fmt.Errorf("url scheme %q", u.Scheme)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, fmt.Errorf("GET %s: %s", u.Redacted(), resp.Status)
	}
	return resp.Body, nil
}
