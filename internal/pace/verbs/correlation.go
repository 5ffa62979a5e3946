package verbs

import (
	"encoding/hex"

	"github.com/buildfleet/buildfleet/internal/pace/cachekey"
)

// Correlation is the digest that binds a COMPILE reply to its request
// (pace-wire §3.9.2 step 4, pace-wire §5.4): BLAKE3-256 under
// cachekey.TagCorrelation over Field(fingerprint), Field(sourceName as sent),
// Field(compileDir), Field(compileDirReplacement), Field(sourceRoot),
// Field(sourceRootReplacement), Item(each argument sent) and Field(preprocessed
// source), rendered as its first CorrelationLen/2 bytes in lowercase hex.
// source is the preprocessed text before any codec, so the value does not
// depend on which codec carried it.
//
// The worker computes it for its reply and signs it; pace-cc recomputes it
// from what it sent and refuses a reply that carries another ("crossed
// reply"). This is the only implementation both sides use.
func (r CompileRequest) Correlation(source []byte) string {
	b := cachekey.New(cachekey.TagCorrelation).
		FieldString(r.Fingerprint).
		FieldString(r.SourceName).
		FieldString(r.CompileDir).
		FieldString(r.CompileDirReplacement).
		FieldString(r.SourceRoot).
		FieldString(r.SourceRootReplacement)
	for _, a := range r.Args {
		b.Item(a)
	}
	sum := b.Field(source).Sum()
	return hex.EncodeToString(sum[:CorrelationLen/2])
}
