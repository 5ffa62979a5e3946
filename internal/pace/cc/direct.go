package cc

import (
	"bytes"
	"context"
	"strings"

	"github.com/buildfleet/buildfleet/internal/pace/cachekey"
	"github.com/buildfleet/buildfleet/internal/pace/value"
)

// tryDirect serves the compile without running the preprocessor when the manifest stored
// under the manifest key still matches every file it lists (pace-wire §3.6). Anything short
// of that, silently, falls through to the preprocessed path.
func (r *run) tryDirect(ctx context.Context) (done bool, status int) {
	mkey := r.manifestKey()
	var missed *cachekey.Digest // the object key the local copy led to, already asked for
	if local, ok := r.readLocalManifest(mkey); ok {
		if key, ok := r.validManifest(local); ok {
			if done, status := r.tryHit(ctx, key, "direct"); done {
				r.rememberHit(local)
				return true, status
			}
			missed = &key
		}
	}
	b, hit := r.fetch(ctx, mkey)
	if !hit {
		return false, 0
	}
	v, err := value.Decode(b)
	if err != nil {
		return false, 0
	}
	key, ok := r.validManifest(v.Object)
	if !ok || (missed != nil && key == *missed) {
		return false, 0
	}
	r.keepLocalManifest(mkey, v.Object)
	return r.tryHit(ctx, key, "direct")
}

// validManifest decodes a manifest and checks every file it lists; it returns the object key
// the manifest points at when all of them still hold.
func (r *run) validManifest(b []byte) (cachekey.Digest, bool) {
	var key cachekey.Digest
	m, err := value.DecodeManifest(b)
	if err != nil || string(m.ToolchainStamp) != r.id.String() || len(m.ObjectKey) != cachekey.Size {
		return key, false
	}
	for _, e := range m.Entries {
		if !r.entryHolds(e) {
			r.verbosef("direct mode: %s changed", e.Path)
			return key, false
		}
	}
	copy(key[:], m.ObjectKey)
	return key, true
}

// entryHolds checks one recorded file against its content hash (from the file-hash memory
// when the file is unchanged since it was last hashed). A file that cannot be read does not
// hold.
func (r *run) entryHolds(e value.ManifestEntry) bool {
	sum, err := r.fileHashes().Hash(r.localPath(e.Path))
	return err == nil && bytes.Equal(sum.Digest[:], e.ContentHash)
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
		sum, err := r.fileHashes().Hash(r.abs(d))
		if err != nil || sum.Temporal {
			return
		}
		p := roots.Relativize(r.abs(d))
		if !strings.HasPrefix(p, "<") && !strings.HasPrefix(p, "/") {
			return // cannot be anchored
		}
		m.Entries = append(m.Entries, value.ManifestEntry{Path: p, ContentHash: append([]byte(nil), sum.Digest[:]...)})
	}
	enc, err := value.EncodeManifest(m)
	if err != nil {
		return
	}
	v, err := value.Encode(value.Value{Object: enc})
	if err == nil {
		mkey := r.manifestKey()
		r.store(ctx, mkey, v)
		r.keepLocalManifest(mkey, enc)
	}
}
