package ccfront

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ErrSelf reports that the only compiler found is pace-cc itself (a masquerade link with
// nothing behind it on PATH), which would recurse forever.
var ErrSelf = errors.New("no real compiler found: every candidate on PATH is pace-cc itself")

// FindCompiler resolves the compiler to run. A name with a slash is used as given unless it is
// pace-cc itself. A bare name is searched on path, skipping every entry that resolves to self:
// the masquerade link itself and any other link to the pace-cc binary (pace-wire §5.7).
func FindCompiler(name, self, path string) (string, error) {
	selfReal, _ := filepath.EvalSymlinks(self)
	if strings.Contains(name, "/") {
		if isSelf(name, selfReal) {
			return "", fmt.Errorf("%w: %s", ErrSelf, name)
		}
		return name, nil
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			dir = "."
		}
		cand := filepath.Join(dir, name)
		if !isExecutable(cand) || isSelf(cand, selfReal) {
			continue
		}
		return cand, nil
	}
	return "", fmt.Errorf("%s: not found on PATH (or only pace-cc itself): %w", name, ErrSelf)
}

func isSelf(cand, selfReal string) bool {
	real, err := filepath.EvalSymlinks(cand)
	return err == nil && selfReal != "" && real == selfReal
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}
