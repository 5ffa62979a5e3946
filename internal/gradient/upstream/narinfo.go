package upstream

import (
	"bufio"
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/buildfleet/buildfleet/internal/gradient/binarycache"
	"github.com/buildfleet/buildfleet/internal/gradient/nixhash"
	"github.com/buildfleet/buildfleet/internal/gradient/store"
)

// MaxNarInfoSize bounds a narinfo read from an upstream; Nix's own are a few hundred bytes,
// a path with thousands of references a few hundred KiB.
const MaxNarInfoSize = 1 << 20

// ErrBadNarInfo: an upstream's narinfo is malformed.
var ErrBadNarInfo = errors.New("upstream: malformed narinfo")

// NarInfo is the part of an upstream narinfo gradient uses.
type NarInfo struct {
	StorePath   string
	URL         string // relative to the upstream's root, or absolute
	Compression string // xz, zstd, bzip2 or none ("" is bzip2, as Nix reads it)
	FileHash    string // sha256:<nix32>, or "" when the narinfo has none
	FileSize    int64
	NarHash     string // sha256:<nix32>
	NarSize     int64
	References  []string // hash-name, as the narinfo lists them
	Deriver     string   // hash-name.drv or ""
	CA          string
	Sigs        []string
}

// ParseNarInfo reads a narinfo. It does no I/O; the caller bounds b by MaxNarInfoSize.
// StorePath, URL, NarHash and NarSize are required; unknown keys are skipped, as Nix does.
func ParseNarInfo(b []byte) (NarInfo, error) {
	if len(b) > MaxNarInfoSize {
		return NarInfo{}, fmt.Errorf("%w: %d bytes", ErrBadNarInfo, len(b))
	}
	var n NarInfo
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 4096), MaxNarInfoSize+1)
	for sc.Scan() {
		line := sc.Text()
		if strings.TrimSpace(line) == "" {
			continue
		}
		key, value, ok := strings.Cut(line, ": ")
		if !ok {
			return NarInfo{}, fmt.Errorf("%w: line %.40q", ErrBadNarInfo, line)
		}
		if err := n.set(key, value); err != nil {
			return NarInfo{}, err
		}
	}
	if err := sc.Err(); err != nil {
		return NarInfo{}, fmt.Errorf("%w: %w", ErrBadNarInfo, err)
	}
	return n, n.check()
}

func (n *NarInfo) set(key, value string) error {
	var err error
	switch key {
	case "StorePath":
		n.StorePath = value
	case "URL":
		n.URL = value
	case "Compression":
		n.Compression = value
	case "FileHash":
		n.FileHash, err = canonical(value)
	case "FileSize":
		n.FileSize, err = size(value)
	case "NarHash":
		n.NarHash, err = canonical(value)
	case "NarSize":
		n.NarSize, err = size(value)
	case "References":
		n.References = strings.Fields(value)
	case "Deriver":
		if value != "unknown-deriver" {
			n.Deriver = value
		}
	case "CA":
		n.CA = value
	case "Sig":
		n.Sigs = append(n.Sigs, value)
	}
	if err != nil {
		return fmt.Errorf("%w: %s: %w", ErrBadNarInfo, key, err)
	}
	return nil
}

func canonical(h string) (string, error) {
	p, err := nixhash.Parse(h)
	if err != nil {
		return "", err
	}
	return p.String(), nil
}

func size(s string) (int64, error) {
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("size %q", s)
	}
	return v, nil
}

// check refuses a narinfo missing a required field or naming paths that are not store
// paths of one store directory.
func (n NarInfo) check() error {
	if _, err := store.StoreHash(n.StorePath); err != nil || !strings.HasPrefix(n.StorePath, "/") {
		return fmt.Errorf("%w: store path %q", ErrBadNarInfo, n.StorePath)
	}
	if n.URL == "" || n.NarHash == "" || n.NarSize == 0 || strings.ContainsAny(n.URL, " \t") {
		return fmt.Errorf("%w: %s: URL, NarHash and NarSize required", ErrBadNarInfo, n.StorePath)
	}
	names := slices.Clone(n.References)
	if n.Deriver != "" {
		names = append(names, n.Deriver)
	}
	for _, r := range names {
		if _, err := store.StoreHash(r); err != nil || strings.Contains(r, "/") {
			return fmt.Errorf("%w: %s: reference or deriver %q", ErrBadNarInfo, n.StorePath, r)
		}
	}
	// The worker knows a NAR's compression only from its URL (a CacheQuery answer carries
	// no compression), so the two must agree.
	if c := cmp.Or(n.Compression, "bzip2"); CompressionOf(n.URL) != c {
		return fmt.Errorf("%w: %s: compression %q does not match URL %q", ErrBadNarInfo, n.StorePath, n.Compression, n.URL)
	}
	return nil
}

// CompressionOf is the compression a NAR URL's suffix names: xz, zstd, bzip2, none, or ""
// for a suffix gradient cannot read.
func CompressionOf(url string) string {
	switch {
	case strings.HasSuffix(url, ".nar.xz"):
		return "xz"
	case strings.HasSuffix(url, ".nar.zst"):
		return "zstd"
	case strings.HasSuffix(url, ".nar.bz2"):
		return "bzip2"
	case strings.HasSuffix(url, ".nar"):
		return "none"
	}
	return ""
}

// FullReferences are the references as full store paths in the path's store directory.
func (n NarInfo) FullReferences() []string {
	dir := path.Dir(n.StorePath)
	out := make([]string, len(n.References))
	for i, r := range n.References {
		out[i] = dir + "/" + r
	}
	return out
}

// SignedBy returns the signatures among n's that publicKey ("name:base64") made of n's
// fingerprint, as Nix checks a narinfo against trusted-public-keys; none means untrusted.
func (n NarInfo) SignedBy(publicKey string) []string {
	fp, err := binarycache.Fingerprint(n.StorePath, n.NarHash, n.NarSize, n.References)
	if err != nil {
		return nil
	}
	var good []string
	for _, sig := range n.Sigs {
		if binarycache.Verify(publicKey, fp, sig) {
			good = append(good, sig)
		}
	}
	return good
}
