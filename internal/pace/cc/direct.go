package cc

import (
	"bytes"
	"context"
	"os"
	"strings"

	"github.com/buildfleet/buildfleet/internal/pace/cachekey"
	"github.com/buildfleet/buildfleet/internal/pace/value"
)

// tryDirect serves the compile without running the preprocessor when the manifest stored
// under the manifest key still matches every file it lists (spec §3.6). Anything short of
// that, silently, falls through to the preprocessed path.
func (r *run) tryDirect(ctx context.Context) (done bool, status int) {
	b, hit := r.fetch(ctx, r.manifestKey())
	if !hit {
		return false, 0
	}
	v, err := value.Decode(b)
	if err != nil {
		return false, 0
	}
	m, err := value.DecodeManifest(v.Object)
	if err != nil || string(m.ToolchainStamp) != r.id.String() || len(m.ObjectKey) != cachekey.Size {
		return false, 0
	}
	for _, e := range m.Entries {
		if !r.entryHolds(e) {
			r.verbosef("direct mode: %s changed", e.Path)
			return false, 0
		}
	}
	var key cachekey.Digest
	copy(key[:], m.ObjectKey)
	return r.tryHit(ctx, key, "direct")
}

// entryHolds re-hashes one recorded file. A file that cannot be read does not hold.
func (r *run) entryHolds(e value.ManifestEntry) bool {
	data, err := os.ReadFile(r.localPath(e.Path))
	if err != nil {
		return false
	}
	sum := cachekey.Content(data)
	return bytes.Equal(sum[:], e.ContentHash)
}

// localPath turns a manifest path back into a path on this machine.
func (r *run) localPath(p string) string {
	return r.abs(r.roots().Localize(p))
}

// recordManifest stores, under the manifest key, the content hash of every file the compile
// read and the object key it produced. A file that cannot be read, or that uses a temporal
// macro (its expansion would go stale without any file changing), leaves direct mode off for
// this translation unit.
func (r *run) recordManifest(ctx context.Context, key cachekey.Digest, deps []string) {
	if r.cfg.NoDirect || r.cacheDown {
		return
	}
	roots := r.roots()
	m := value.Manifest{ToolchainStamp: []byte(r.id.String()), ObjectKey: key[:]}
	for _, d := range deps {
		data, err := os.ReadFile(r.abs(d))
		if err != nil || hasTemporalMacro(data) {
			return
		}
		sum := cachekey.Content(data)
		p := roots.Relativize(r.abs(d))
		if !strings.HasPrefix(p, "<") && !strings.HasPrefix(p, "/") {
			return // cannot be anchored
		}
		m.Entries = append(m.Entries, value.ManifestEntry{Path: p, ContentHash: append([]byte(nil), sum[:]...)})
	}
	enc, err := value.EncodeManifest(m)
	if err != nil {
		return
	}
	v, err := value.Encode(value.Value{Object: enc})
	if err == nil {
		r.store(ctx, r.manifestKey(), v)
	}
}
