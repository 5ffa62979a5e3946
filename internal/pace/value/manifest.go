package value

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
)

// ManifestFormat is the direct-mode manifest format this build writes and reads (pace-wire §2.4,
// pace-wire §5.4).
const ManifestFormat = 1

// MaxManifestEntries caps a manifest's entry count before anything is reserved. A translation
// unit of a large C++ code base includes a few thousand headers; the cap leaves ample room.
const MaxManifestEntries = 1 << 18

// manifestEntryMin is the least an entry can occupy: two empty fields.
const manifestEntryMin = 4 + 4

var (
	// ErrMalformedManifest: the bytes are not a well-formed manifest (a client treats it as a miss).
	ErrMalformedManifest = errors.New("malformed direct-mode manifest")
	// ErrManifestFormat: a manifest of a format this build does not read.
	ErrManifestFormat = errors.New("unsupported direct-mode manifest format")
	// ErrManifestConflict: one path listed with two different content hashes.
	ErrManifestConflict = errors.New("manifest lists one path with two content hashes")
)

// ManifestEntry is one input file of a direct-mode manifest.
type ManifestEntry struct {
	Path        string // canonical path (pace-wire §2.3 tokens allowed)
	ContentHash []byte
}

// Manifest maps a toolchain and the content of every input to the object key (pace-wire §2.4). It
// is stored as the object blob of a compile-value with zero regions, under the manifest key.
type Manifest struct {
	ToolchainStamp []byte
	ObjectKey      []byte
	Entries        []ManifestEntry
}

// EncodeManifest writes m with its entries sorted by path and deduplicated. m is not modified.
func EncodeManifest(m Manifest) ([]byte, error) {
	entries, err := normalizeEntries(m.Entries)
	if err != nil {
		return nil, err
	}
	if len(entries) > MaxManifestEntries {
		return nil, fmt.Errorf("%d entries, at most %d: %w", len(entries), MaxManifestEntries, ErrMalformedManifest)
	}
	size := 1 + 4 + len(m.ToolchainStamp) + 4 + len(m.ObjectKey) + 4
	for _, e := range entries {
		size += manifestEntryMin + len(e.Path) + len(e.ContentHash)
	}
	out := make([]byte, 0, size)
	out = append(out, ManifestFormat)
	out, err = appendFields(out, m.ToolchainStamp, m.ObjectKey)
	if err != nil {
		return nil, err
	}
	out = binary.BigEndian.AppendUint32(out, uint32(len(entries)))
	for _, e := range entries {
		if out, err = appendFields(out, []byte(e.Path), e.ContentHash); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func normalizeEntries(in []ManifestEntry) ([]ManifestEntry, error) {
	entries := slices.Clone(in)
	slices.SortStableFunc(entries, func(a, b ManifestEntry) int { return cmp.Compare(a.Path, b.Path) })
	out := entries[:0]
	for _, e := range entries {
		if n := len(out); n > 0 && out[n-1].Path == e.Path {
			if !bytes.Equal(out[n-1].ContentHash, e.ContentHash) {
				return nil, fmt.Errorf("path %q: %w", e.Path, ErrManifestConflict)
			}
			continue
		}
		out = append(out, e)
	}
	return out, nil
}

func appendFields(dst []byte, fields ...[]byte) ([]byte, error) {
	for _, f := range fields {
		if uint64(len(f)) > math.MaxUint32 {
			return nil, fmt.Errorf("manifest field of %d bytes: %w", len(f), ErrTooLong)
		}
		dst = binary.BigEndian.AppendUint32(dst, uint32(len(f)))
		dst = append(dst, f...)
	}
	return dst, nil
}

// DecodeManifest parses a manifest. Entries must be sorted by path with no duplicates, exactly
// as EncodeManifest writes them; ToolchainStamp, ObjectKey and ContentHash alias b.
func DecodeManifest(b []byte) (Manifest, error) {
	r := reader{buf: b}
	format, ok := r.u8()
	if !ok {
		return Manifest{}, fmt.Errorf("empty: %w", ErrMalformedManifest)
	}
	if format != ManifestFormat {
		return Manifest{}, fmt.Errorf("format %d, this build reads %d: %w", format, ManifestFormat, ErrManifestFormat)
	}
	var m Manifest
	if m.ToolchainStamp, ok = r.field(); !ok {
		return Manifest{}, fmt.Errorf("toolchain stamp: %w", ErrMalformedManifest)
	}
	if m.ObjectKey, ok = r.field(); !ok {
		return Manifest{}, fmt.Errorf("object key: %w", ErrMalformedManifest)
	}
	count, ok := r.u32()
	if !ok {
		return Manifest{}, fmt.Errorf("no entry count: %w", ErrMalformedManifest)
	}
	if uint64(count) > uint64(r.remaining()/manifestEntryMin) || count > MaxManifestEntries {
		return Manifest{}, fmt.Errorf("entry count %d with %d bytes left (cap %d): %w", count, r.remaining(), MaxManifestEntries, ErrMalformedManifest)
	}
	entries, err := decodeEntries(&r, count)
	if err != nil {
		return Manifest{}, err
	}
	if r.remaining() != 0 {
		return Manifest{}, fmt.Errorf("%d trailing bytes: %w", r.remaining(), ErrMalformedManifest)
	}
	m.Entries = entries
	return m, nil
}

func decodeEntries(r *reader, count uint32) ([]ManifestEntry, error) {
	if count == 0 {
		return nil, nil
	}
	entries := make([]ManifestEntry, 0, count)
	for i := range count {
		path, ok1 := r.field()
		hash, ok2 := r.field()
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("entry %d: field exceeds the bytes left: %w", i, ErrMalformedManifest)
		}
		if n := len(entries); n > 0 && entries[n-1].Path >= string(path) {
			return nil, fmt.Errorf("entry %d: paths not sorted and distinct: %w", i, ErrMalformedManifest)
		}
		entries = append(entries, ManifestEntry{Path: string(path), ContentHash: hash})
	}
	return entries, nil
}
