package binarycache

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/buildfleet/buildfleet/internal/gradient/nixhash"
	"github.com/buildfleet/buildfleet/internal/gradient/store"
)

// StoreDir is the Nix store gradient's workers build into, announced in nix-cache-info.
const StoreDir = "/nix/store"

// Compression is how every stored NAR is compressed (gradient-protocol §7.3: zstd, never
// recompressed).
const Compression = "zstd"

// ErrBadRow: a cached_path row cannot be written as a narinfo (an unreadable hash, a
// malformed path, or a line break in a field).
var ErrBadRow = errors.New("binarycache: cached path row cannot be served")

// NarInfo is one .narinfo file: what Nix needs to fetch, check and register a path.
type NarInfo struct {
	StorePath   string
	URL         string // relative to the cache root
	FileHash    string // sha256:<nix32> of the compressed file
	FileSize    int64
	NarHash     string // sha256:<nix32> of the NAR
	NarSize     int64
	References  []string // full store paths, sorted
	Deriver     string   // full .drv path or ""
	CA          string
	Signatures  []string
	Compression string
}

// NarURL is the cache-relative URL of a NAR whose compressed bytes have fileHash.
func NarURL(fileHash nixhash.SHA256) string {
	return "nar/" + nixhash.EncodeBase32(fileHash[:]) + ".nar.zst"
}

// NarInfoOf is a stored row as a narinfo, unsigned. Hashes are written sha256:<nix32> and
// references as full store paths in the path's store directory, as the fingerprint needs.
func NarInfoOf(row store.CachedPath) (NarInfo, error) {
	fileHash, err := nixhash.Parse(row.FileHash)
	if err != nil {
		return NarInfo{}, fmt.Errorf("%w: %s: file hash: %w", ErrBadRow, row.StorePath, err)
	}
	n, err := pathInfo(row.StorePath, row.NarHash, row.NarSize, row.References)
	if err != nil {
		return NarInfo{}, err
	}
	n.URL, n.Compression, n.FileHash, n.FileSize, n.CA = NarURL(fileHash), Compression, fileHash.String(), row.FileSize, row.CA
	if row.Deriver != "" {
		if _, err := store.StoreHash(row.Deriver); err != nil {
			return NarInfo{}, fmt.Errorf("%w: %s: deriver %q", ErrBadRow, row.StorePath, row.Deriver)
		}
		n.Deriver = path.Dir(row.StorePath) + "/" + path.Base(row.Deriver)
	}
	if strings.ContainsAny(n.Deriver+n.CA, "\r\n") {
		return NarInfo{}, fmt.Errorf("%w: %s: a field holds a line break", ErrBadRow, row.StorePath)
	}
	return n, nil
}

// pathInfo is the signed part of a narinfo: the path, its NAR hash and size, and its
// references as sorted full store paths.
func pathInfo(storePath, narHash string, narSize int64, references []string) (NarInfo, error) {
	if _, err := store.StoreHash(storePath); err != nil || !strings.HasPrefix(storePath, "/") ||
		strings.ContainsAny(storePath, "\r\n;,") {
		return NarInfo{}, fmt.Errorf("%w: store path %q", ErrBadRow, storePath)
	}
	h, err := nixhash.Parse(narHash)
	if err != nil {
		return NarInfo{}, fmt.Errorf("%w: %s: nar hash: %w", ErrBadRow, storePath, err)
	}
	dir := path.Dir(storePath)
	refs := make([]string, 0, len(references))
	for _, r := range references {
		if _, err := store.StoreHash(r); err != nil || strings.ContainsAny(r, "\r\n ;,") {
			return NarInfo{}, fmt.Errorf("%w: %s: reference %q", ErrBadRow, storePath, r)
		}
		refs = append(refs, dir+"/"+path.Base(r))
	}
	slices.Sort(refs)
	return NarInfo{StorePath: storePath, NarHash: h.String(), NarSize: narSize, References: slices.Compact(refs)}, nil
}

// Fingerprint is what Nix signs and verifies for a path:
// "1;<store path>;<nar hash>;<nar size>;<references, comma-joined>".
func (n NarInfo) Fingerprint() string {
	return "1;" + n.StorePath + ";" + n.NarHash + ";" + strconv.FormatInt(n.NarSize, 10) + ";" +
		strings.Join(n.References, ",")
}

// Fingerprint is Nix's signing fingerprint of a path: narHash in any form nixhash reads
// (written sha256:<nix32>), references as full store paths or hash-name, sorted here.
func Fingerprint(storePath, narHash string, narSize int64, references []string) (string, error) {
	n, err := pathInfo(storePath, narHash, narSize, references)
	if err != nil {
		return "", err
	}
	return n.Fingerprint(), nil
}

// String writes the narinfo as Nix does: references and deriver by base name.
func (n NarInfo) String() string {
	var b strings.Builder
	line := func(k, v string) { b.WriteString(k + ": " + v + "\n") }
	line("StorePath", n.StorePath)
	line("URL", n.URL)
	line("Compression", n.Compression)
	line("FileHash", n.FileHash)
	line("FileSize", strconv.FormatInt(n.FileSize, 10))
	line("NarHash", n.NarHash)
	line("NarSize", strconv.FormatInt(n.NarSize, 10))
	refs := make([]string, len(n.References))
	for i, r := range n.References {
		refs[i] = path.Base(r)
	}
	line("References", strings.Join(refs, " "))
	if n.Deriver != "" {
		line("Deriver", path.Base(n.Deriver))
	}
	for _, s := range n.Signatures {
		line("Sig", s)
	}
	if n.CA != "" {
		line("CA", n.CA)
	}
	return b.String()
}

// cacheInfo is nix-cache-info. Priority 40 ranks gradient before cache.nixos.org (50) for
// what both hold: the fleet's own cache is usually nearer.
func cacheInfo() string {
	return "StoreDir: " + StoreDir + "\nWantMassQuery: 1\nPriority: 40\n"
}
