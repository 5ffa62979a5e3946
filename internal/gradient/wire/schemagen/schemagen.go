// Package schemagen keeps a directory of schema files (v{N}.txt, gradient-protocol §2.3) in
// step with the code: it writes the file of every supported version that has none, deletes
// files below the oldest supported version, and never rewrites an existing file. It backs the
// gradient-wire-schema command.
package schemagen

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"

	"github.com/buildfleet/buildfleet/internal/gradient/wire"
)

// ErrRefused: the directory needs a change the tool never makes (rewriting an existing file).
var ErrRefused = errors.New("refused")

// Describer returns the schema text of a version (wire.Describe in production).
type Describer func(version uint16) string

// Result lists what Sync did, by file name.
type Result struct {
	Written []string
	Deleted []string
	Kept    []string
}

var schemaName = regexp.MustCompile(`^v([0-9]+)\.txt$`)

// FileName is the schema file name of version v.
func FileName(v uint16) string { return "v" + strconv.Itoa(int(v)) + ".txt" }

// Sync brings dir in step with the supported range: it writes missing files, deletes files
// below r.Oldest and leaves matching files alone. A file in range whose content differs from
// describe, or a file above r.Newest, is refused with ErrRefused: a changed shape needs a new
// protocol version, never an edited schema file.
func Sync(dir string, r wire.VersionRange, describe Describer) (Result, error) {
	var res Result
	existing, err := list(dir)
	if err != nil {
		return res, err
	}
	var refusals []error
	for _, v := range slices.Sorted(maps.Keys(existing)) {
		name := existing[v]
		switch {
		case v < r.Oldest:
			if err := os.Remove(filepath.Join(dir, name)); err != nil {
				return res, fmt.Errorf("delete %s: %w", name, err)
			}
			res.Deleted = append(res.Deleted, name)
		case v > r.Newest:
			refusals = append(refusals, fmt.Errorf("%w: %s is above the newest supported version %d", ErrRefused, name, r.Newest))
		default:
			if err := check(dir, name, describe(v)); err != nil {
				refusals = append(refusals, err)
				continue
			}
			res.Kept = append(res.Kept, name)
		}
	}
	for v := range r.All() {
		if _, ok := existing[v]; ok {
			continue
		}
		if err := Write(dir, r, v, describe); err != nil {
			return res, err
		}
		res.Written = append(res.Written, FileName(v))
	}
	return res, errors.Join(refusals...)
}

// Write creates the schema file of version v, which must be supported. It refuses to touch
// an existing file.
func Write(dir string, r wire.VersionRange, v uint16, describe Describer) error {
	if !r.Contains(v) {
		return fmt.Errorf("%w: version %d is outside the supported range %v", ErrRefused, v, r)
	}
	path := filepath.Join(dir, FileName(v))
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, os.ErrExist) {
		return fmt.Errorf("%w: %s exists and schema files are never rewritten", ErrRefused, FileName(v))
	}
	if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	_, werr := f.WriteString(describe(v))
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return fmt.Errorf("write %s: %w", path, werr)
	}
	return nil
}

func check(dir, name, want string) error {
	got, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		return fmt.Errorf("read %s: %w", name, err)
	}
	if !bytes.Equal(got, []byte(want)) {
		return fmt.Errorf("%w: %s differs from the code; schema files are never rewritten, so a shape change needs a new protocol version", ErrRefused, name)
	}
	return nil
}

// list maps version to file name for every v{N}.txt in dir.
func list(dir string) (map[uint16]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("read schema dir: %w", err)
	}
	found := make(map[uint16]string)
	for _, e := range entries {
		m := schemaName.FindStringSubmatch(e.Name())
		if m == nil || e.IsDir() {
			continue
		}
		v, err := strconv.ParseUint(m[1], 10, 16)
		if err != nil {
			return nil, fmt.Errorf("schema file %s: %w", e.Name(), err)
		}
		found[uint16(v)] = e.Name()
	}
	return found, nil
}
