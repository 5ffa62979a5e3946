package upstream

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path"
	"strings"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/store"
	"github.com/buildfleet/buildfleet/internal/gradient/wire"
)

// FetchTimeout bounds one narinfo fetch, well inside the 45 s a CacheQuery answer has
// (gradient-protocol §7.2) even when a cache names several upstreams.
const FetchTimeout = 10 * time.Second

// Lister lists the upstreams of caches (store.Upstreams.ListCacheUpstreams).
type Lister func(ctx context.Context, cacheIDs []string) ([]store.CacheUpstream, error)

// Resolver finds paths in the upstreams of caches. It is safe for concurrent use.
type Resolver struct {
	list   Lister
	client *http.Client
	log    *slog.Logger
}

// NewResolver returns a Resolver over list. A nil client gets one with FetchTimeout; a nil
// logger discards.
func NewResolver(list Lister, client *http.Client, log *slog.Logger) *Resolver {
	if client == nil {
		client = &http.Client{Timeout: FetchTimeout}
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Resolver{list: list, client: client, log: log}
}

// Found is a path an upstream holds under a signature by the key trusted there.
type Found struct {
	Upstream string // the upstream's root
	Info     NarInfo
	NarURL   string   // absolute
	Sigs     []string // the signatures the trusted key made
}

// Find asks the upstreams of cacheIDs, in order, for storePath's narinfo and returns the
// first one signed by that upstream's trusted key. An upstream that fails or answers a
// narinfo it did not sign counts as not holding the path; only a failure to read the state
// is an error (never a false miss for the caller to report).
func (r *Resolver) Find(ctx context.Context, cacheIDs []string, storePath string) (Found, bool, error) {
	hash, err := store.StoreHash(storePath)
	if err != nil {
		return Found{}, false, nil
	}
	ups, err := r.list(ctx, cacheIDs)
	if err != nil {
		return Found{}, false, fmt.Errorf("upstream: listing upstreams: %w", err)
	}
	for _, up := range ups {
		up.URL = strings.TrimRight(up.URL, "/")
		f, err := r.try(ctx, up, hash, storePath)
		if err != nil {
			r.log.Warn("upstream: no usable narinfo", "upstream", up.URL, "path", storePath, "err", err)
			continue
		}
		if f != nil {
			return *f, true, nil
		}
	}
	return Found{}, false, nil
}

// Lookup is Find as a Pull answer (cacheserve.Upstream).
func (r *Resolver) Lookup(ctx context.Context, cacheIDs []string, storePath string) (wire.CachedPath, bool, error) {
	f, ok, err := r.Find(ctx, cacheIDs, storePath)
	if !ok || err != nil {
		return wire.CachedPath{}, false, err
	}
	return f.CachedPath(), true, nil
}

var errUntrusted = errors.New("no signature by the key trusted for this upstream")

// try fetches and checks one upstream's narinfo; nil, nil when it has none.
func (r *Resolver) try(ctx context.Context, up store.CacheUpstream, hash, storePath string) (*Found, error) {
	body, err := r.fetch(ctx, up.URL+"/"+hash+".narinfo")
	if body == nil || err != nil {
		return nil, err
	}
	ni, err := ParseNarInfo(body)
	if err != nil {
		return nil, err
	}
	if ni.StorePath != storePath {
		return nil, fmt.Errorf("%w: narinfo of %s names %s", ErrBadNarInfo, storePath, ni.StorePath)
	}
	sigs := ni.SignedBy(up.PublicKey) // before anything of the narinfo is used
	if len(sigs) == 0 {
		return nil, errUntrusted
	}
	narURL, err := resolveNarURL(up.URL, ni.URL)
	if err != nil {
		return nil, err
	}
	return &Found{Upstream: up.URL, Info: ni, NarURL: narURL, Sigs: sigs}, nil
}

// resolveNarURL makes a narinfo's URL absolute against the upstream's root; it must stay
// on the root's scheme, so an http upstream cannot point a worker at its local files.
func resolveNarURL(root, ref string) (string, error) {
	base, err := url.Parse(root + "/")
	if err != nil {
		return "", fmt.Errorf("%w: root %q", ErrBadUpstream, root)
	}
	rel, err := url.Parse(ref)
	if err != nil {
		return "", fmt.Errorf("%w: NAR URL %q", ErrBadNarInfo, ref)
	}
	abs := base.ResolveReference(rel)
	if abs.Scheme != base.Scheme || abs.User != nil {
		return "", fmt.Errorf("%w: NAR URL %q leaves the upstream's scheme", ErrBadNarInfo, ref)
	}
	return abs.String(), nil
}

// fetch reads a narinfo by URL, bounded by MaxNarInfoSize; nil, nil when there is none.
func (r *Resolver) fetch(ctx context.Context, rawURL string) ([]byte, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("%w: %q", ErrBadUpstream, rawURL)
	}
	if u.Scheme == "file" {
		f, err := os.Open(u.Path)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		defer f.Close()
		return readBounded(f)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return nil, err
	}
	resp, err := r.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK:
		return readBounded(resp.Body)
	case http.StatusNotFound, http.StatusForbidden:
		return nil, nil
	}
	return nil, fmt.Errorf("upstream: GET %s: %s", rawURL, resp.Status)
}

// readBounded refuses a narinfo over MaxNarInfoSize before holding more of it.
func readBounded(rd io.Reader) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(rd, MaxNarInfoSize+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxNarInfoSize {
		return nil, fmt.Errorf("%w: over %d bytes", ErrBadNarInfo, MaxNarInfoSize)
	}
	return b, nil
}

// CachedPath is f as a Pull answer (gradient-protocol §7.2): the upstream's metadata, the
// trusted signatures, and url set to the NAR, which the worker fetches itself.
func (f Found) CachedPath() wire.CachedPath {
	n := f.Info
	c := wire.CachedPath{Path: n.StorePath, Cached: true, URL: wire.Some(f.NarURL),
		NarSize: wire.Some(uint64(n.NarSize)), NarHash: wire.Some(n.NarHash),
		References: wire.Some(n.FullReferences()), Signatures: wire.Some(f.Sigs)}
	if n.FileHash != "" {
		c.FileHash = wire.Some(n.FileHash)
	}
	if n.FileSize > 0 {
		c.FileSize = wire.Some(uint64(n.FileSize))
	}
	if n.Deriver != "" {
		c.Deriver = wire.Some(path.Dir(n.StorePath) + "/" + n.Deriver)
	}
	if n.CA != "" {
		c.CA = wire.Some(n.CA)
	}
	return c
}
