package toolchain

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"github.com/buildfleet/buildfleet/internal/pace/cachekey"
)

// Fingerprint returns the toolchain fingerprint of an identified compiler: 64 lowercase hex
// characters that match byte for byte between machines running the same compiler build.
func Fingerprint(ctx context.Context, id Identity, cacheDir string) (string, error) {
	file := ""
	if cacheDir != "" {
		file = cachePath(cacheDir, "fp", id.Compiler)
		if c, ok := loadCached(file); ok && c.values["fingerprint"] != "" {
			return c.values["fingerprint"], nil
		}
	}
	parts, err := fingerprintParts(ctx, id)
	if err != nil {
		return "", err
	}
	fp, ws, err := parts.digest(id)
	if err != nil {
		return "", err
	}
	if file != "" {
		_ = storeCached(file, cached{witnesses: ws, values: map[string]string{"fingerprint": fp}})
	}
	return fp, nil
}

// parts are the files and facts a fingerprint covers beyond the identity itself.
type parts struct {
	binaries        []string // hashed whole: the compiler proper
	assemblerBanner string
	resourceInclude string // the compiler's own headers, hashed as a tree
}

func fingerprintParts(ctx context.Context, id Identity) (parts, error) {
	var p parts
	if id.Flavor == Clang {
		p.binaries = []string{id.Compiler}
		dir, err := run(ctx, id.Compiler, "-print-resource-dir")
		if err != nil {
			return parts{}, err
		}
		p.resourceInclude = filepath.Join(strings.TrimSpace(dir), "include")
		return p, nil
	}
	for _, prog := range []string{"cc1", "cc1plus"} {
		path, err := run(ctx, id.Compiler, "-print-prog-name="+prog)
		if path = strings.TrimSpace(path); err == nil && filepath.IsAbs(path) && fileExists(path) {
			p.binaries = append(p.binaries, path)
		}
	}
	if len(p.binaries) == 0 {
		return parts{}, fmt.Errorf("toolchain: %s names no compiler proper (cc1)", id.Compiler)
	}
	if as, err := run(ctx, id.Compiler, "-print-prog-name=as"); err == nil {
		p.assemblerBanner = assemblerBanner(ctx, strings.TrimSpace(as))
	}
	inc, err := run(ctx, id.Compiler, "-print-file-name=include")
	if err != nil {
		return parts{}, err
	}
	p.resourceInclude = strings.TrimSpace(inc)
	return p, nil
}

func assemblerBanner(ctx context.Context, as string) string {
	if !filepath.IsAbs(as) {
		found, err := exec.LookPath(as)
		if err != nil {
			return ""
		}
		as = found
	}
	out, err := run(ctx, as, "--version")
	if err != nil {
		return ""
	}
	first, _, _ := strings.Cut(out, "\n")
	return strings.TrimSpace(first)
}

// digest hashes the parts and returns the witnesses that revalidate the result.
func (p parts) digest(id Identity) (string, []witness, error) {
	b := cachekey.New(cachekey.TagToolchain).FieldString(id.Banner).FieldString(id.Target)
	b.FieldString(p.assemblerBanner)
	var ws []witness
	driver, err := statWitness(id.Compiler)
	if err != nil {
		return "", nil, err
	}
	ws = append(ws, driver)
	for _, bin := range p.binaries {
		sum, w, err := hashFile(bin)
		if err != nil {
			return "", nil, err
		}
		b.Path(filepath.Base(bin)).Item(sum)
		ws = append(ws, w)
	}
	tree, err := hashTree(p.resourceInclude)
	if err != nil {
		return "", nil, err
	}
	for _, f := range tree {
		b.Path(f.rel).Item(f.sum)
		ws = append(ws, f.w)
	}
	return b.Sum().Hex(), ws, nil
}

type treeFile struct {
	rel, sum string
	w        witness
}

// hashTree hashes every regular file under root, sorted by relative path. A missing root is an
// empty tree: not every compiler ships resource headers.
func hashTree(root string) ([]treeFile, error) {
	var files []treeFile
	if !fileExists(root) {
		return nil, nil
	}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		sum, w, err := hashFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		files = append(files, treeFile{rel: filepath.ToSlash(rel), sum: sum, w: w})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("toolchain: hashing %s: %w", root, err)
	}
	sort.Slice(files, func(i, j int) bool { return files[i].rel < files[j].rel })
	return files, nil
}

func hashFile(path string) (string, witness, error) {
	w, err := statWitness(path)
	if err != nil {
		return "", witness{}, err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return "", witness{}, fmt.Errorf("toolchain: %w", err)
	}
	return cachekey.Content(data).Hex(), w, nil
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
