package nixexec

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strings"
)

// ErrInvalidPath: a path is not valid in the store (not present, or not registered).
var ErrInvalidPath = errors.New("nixexec: path is not valid")

// PathInfo is a valid store path's metadata, in the forms gradient puts on the wire.
type PathInfo struct {
	Path    string
	NarHash string // sha256:<nix32>
	NarSize uint64
	// References are full store paths, sorted as Nix lists them.
	References []string
	Deriver    string // full .drv path, or ""
	CA         string // narinfo form (fixed:r:sha256:…, text:sha256:…), or ""
}

// ShortReferences writes the references in hash-name form (no store directory), as
// UploadFinished wants them (gradient-protocol §7.3).
func (p PathInfo) ShortReferences() []string {
	out := make([]string, len(p.References))
	for i, r := range p.References {
		out[i] = path.Base(r)
	}
	return out
}

// PathInfo reads the metadata of valid paths with `nix path-info --json`, in the order
// given. An invalid path fails the call with ErrInvalidPath.
func (n *Nix) PathInfo(ctx context.Context, paths []string) ([]PathInfo, error) {
	// The new CLI reads a .drv argument as the derivation's outputs unless --derivation is
	// given, and --derivation turns any other path into its deriver: two calls.
	var drvs, others []string
	for _, p := range paths {
		if strings.HasSuffix(p, ".drv") {
			drvs = append(drvs, p)
		} else {
			others = append(others, p)
		}
	}
	byPath := make(map[string]PathInfo, len(paths))
	for _, group := range []struct {
		paths []string
		flags []string
	}{{others, nil}, {drvs, []string{"--derivation"}}} {
		if len(group.paths) == 0 {
			continue
		}
		args := append(append([]string{"path-info", "--json"}, group.flags...), group.paths...)
		infos, err := n.pathInfo(ctx, args)
		if err != nil {
			return nil, err
		}
		for _, i := range infos {
			byPath[i.Path] = i
		}
	}
	out := make([]PathInfo, 0, len(paths))
	for _, p := range paths {
		info, ok := byPath[p]
		if !ok {
			return nil, fmt.Errorf("%w: %s (not listed by path-info)", ErrInvalidPath, p)
		}
		out = append(out, info)
	}
	return out, nil
}

func (n *Nix) pathInfo(ctx context.Context, args []string) ([]PathInfo, error) {
	out, err := n.output(ctx, "nix", n.nixArgs(args...)...)
	if err != nil {
		var cmdErr *CommandError
		if errors.As(err, &cmdErr) && strings.Contains(cmdErr.Stderr, "is not valid") {
			return nil, fmt.Errorf("%w: %s", ErrInvalidPath, cmdErr.Message())
		}
		return nil, err
	}
	return ParsePathInfo(out)
}

type rawPathInfo struct {
	Path       string   `json:"path"`
	Valid      *bool    `json:"valid"`
	NarHash    string   `json:"narHash"`
	NarSize    uint64   `json:"narSize"`
	References []string `json:"references"`
	Deriver    string   `json:"deriver"`
	CA         string   `json:"ca"`
}

// ParsePathInfo decodes `nix path-info --json` output, converting narHash from SRI to
// sha256:<nix32>.
func ParsePathInfo(out []byte) ([]PathInfo, error) {
	var raw []rawPathInfo
	if err := json.Unmarshal(out, &raw); err != nil {
		return nil, fmt.Errorf("nixexec: path-info output: %w", err)
	}
	infos := make([]PathInfo, 0, len(raw))
	for _, r := range raw {
		if r.Valid != nil && !*r.Valid {
			return nil, fmt.Errorf("%w: %s", ErrInvalidPath, r.Path)
		}
		sum, err := ParseSHA256(r.NarHash)
		if err != nil {
			return nil, fmt.Errorf("nixexec: %s: narHash: %w", r.Path, err)
		}
		infos = append(infos, PathInfo{Path: r.Path, NarHash: SHA256Text(sum), NarSize: r.NarSize,
			References: r.References, Deriver: r.Deriver, CA: r.CA})
	}
	return infos, nil
}

// Invalid returns the paths among paths that are not valid in the store.
func (n *Nix) Invalid(ctx context.Context, paths []string) ([]string, error) {
	if len(paths) == 0 {
		return nil, nil
	}
	out, err := n.output(ctx, "nix-store", n.storeArgs(append([]string{"--check-validity", "--print-invalid"}, paths...)...)...)
	if err != nil {
		return nil, err
	}
	return lines(out), nil
}

// Requisites lists the closure of paths (the paths themselves included).
func (n *Nix) Requisites(ctx context.Context, paths []string) ([]string, error) {
	if len(paths) == 0 {
		return nil, nil
	}
	out, err := n.output(ctx, "nix-store", n.storeArgs(append([]string{"--query", "--requisites"}, paths...)...)...)
	if err != nil {
		return nil, err
	}
	return lines(out), nil
}

// Delete removes paths from the store (`nix-store --delete`); it fails when something still
// references them or a GC root holds them.
func (n *Nix) Delete(ctx context.Context, paths []string) error {
	if len(paths) == 0 {
		return nil
	}
	_, err := n.output(ctx, "nix-store", n.storeArgs(append([]string{"--delete"}, paths...)...)...)
	return err
}

func lines(out []byte) []string {
	var res []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" {
			res = append(res, l)
		}
	}
	return res
}
