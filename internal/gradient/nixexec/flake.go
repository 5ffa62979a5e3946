package nixexec

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
)

// Archive is a flake's source in the store and the store paths of its locked inputs.
type Archive struct {
	Source string
	Inputs []string // sorted, without duplicates
	// Warnings are inputs that could not be prefetched after the archive failed.
	Warnings []string
}

// ArchiveFlake puts the flake at ref and its locked inputs into the store with `nix flake
// archive --json` (gradient-server §8.2). When that fails it falls back to `nix flake prefetch
// --json` for the source alone, which is fatal only if it fails too.
func (n *Nix) ArchiveFlake(ctx context.Context, ref string) (Archive, error) {
	out, err := n.output(ctx, "nix", n.nixArgs("flake", "archive", "--json", ref)...)
	if err == nil {
		return ParseFlakeArchive(out)
	}
	var cmdErr *CommandError
	if !errors.As(err, &cmdErr) {
		return Archive{}, err
	}
	pre, perr := n.output(ctx, "nix", n.nixArgs("flake", "prefetch", "--json", ref)...)
	if perr != nil {
		return Archive{}, fmt.Errorf("nixexec: flake archive failed (%w) and so did prefetch: %w", err, perr)
	}
	var p struct {
		StorePath string `json:"storePath"`
	}
	if jerr := json.Unmarshal(pre, &p); jerr != nil || p.StorePath == "" {
		return Archive{}, fmt.Errorf("nixexec: flake prefetch output: %s", pre)
	}
	return Archive{Source: p.StorePath, Warnings: []string{"flake archive failed, inputs not archived: " + cmdErr.Message()}}, nil
}

type archiveNode struct {
	Path   string                 `json:"path"`
	Inputs map[string]archiveNode `json:"inputs"`
}

// ParseFlakeArchive decodes `nix flake archive --json` output: the source path and, recursively,
// every input's path.
func ParseFlakeArchive(out []byte) (Archive, error) {
	var root archiveNode
	if err := json.Unmarshal(out, &root); err != nil || root.Path == "" {
		return Archive{}, fmt.Errorf("nixexec: flake archive output: %q", out)
	}
	var inputs []string
	var collect func(archiveNode)
	collect = func(n archiveNode) {
		for _, in := range n.Inputs {
			if in.Path != "" {
				inputs = append(inputs, in.Path)
			}
			collect(in)
		}
	}
	collect(root)
	slices.Sort(inputs)
	return Archive{Source: root.Path, Inputs: slices.Compact(inputs)}, nil
}

// StoreFlakeRef is the locked flake reference of a flake source already in the store:
// path:<store path>?narHash=<SRI>, which pure evaluation accepts.
func (n *Nix) StoreFlakeRef(ctx context.Context, storePath string) (string, error) {
	infos, err := n.PathInfo(ctx, []string{storePath})
	if err != nil {
		return "", err
	}
	sum, err := ParseSHA256(infos[0].NarHash)
	if err != nil {
		return "", err
	}
	return "path:" + storePath + "?narHash=" + url.QueryEscape(sriSHA256(sum)), nil
}
