package value

import "fmt"

// Canonicalize rewrites the paths every region's grammar identifies: a path under r.SrcRoot or
// r.BuildTree becomes <SRCROOT>/tail or <BUILDTREE>/tail (pace-wire §2.3). The object and every
// byte outside those paths are kept; regions that do not change share their bytes with v. Empty
// roots return v unchanged.
func Canonicalize(v Value, r Roots) Value {
	if r.Empty() {
		return v
	}
	rs := newRootSet(r)
	out, _ := rewriteRegions(v, rs.canonical)
	return out
}

// Localize is the inverse of Canonicalize on the consumer's side: <SRCROOT> and <BUILDTREE>
// become the consumer's roots, with tails in each root's own separator style. A token whose
// root the consumer did not give is left as it is.
func Localize(v Value, r Roots) Value {
	if r.Empty() {
		return v
	}
	rs := newRootSet(r)
	out, _ := rewriteRegions(v, rs.local)
	return out
}

// CanonicalizeText canonicalizes one text of grammar g; it returns text itself when nothing
// changed.
func CanonicalizeText(g Grammar, text []byte, r Roots) []byte {
	if r.Empty() {
		return text
	}
	rs := newRootSet(r)
	out, _ := g.rewrite(text, rs.canonical)
	return out
}

// LocalizeText localizes one text of grammar g; it returns text itself when nothing changed.
func LocalizeText(g Grammar, text []byte, r Roots) []byte {
	if r.Empty() {
		return text
	}
	rs := newRootSet(r)
	out, _ := g.rewrite(text, rs.local)
	return out
}

// CanonicalizeEncoded is what a server does with a STORE payload: decode it (ErrNotAValue or
// ErrForeignGeneration on refusal), canonicalize its regions with the frame's roots, and return
// the bytes to store. When no path changes, the payload itself is returned, uncopied.
func CanonicalizeEncoded(payload []byte, r Roots) ([]byte, error) {
	v, err := Decode(payload)
	if err != nil {
		return nil, err
	}
	if r.Empty() {
		return payload, nil
	}
	rs := newRootSet(r)
	out, changed := rewriteRegions(v, rs.canonical)
	if !changed {
		return payload, nil
	}
	b, err := Encode(out)
	if err != nil {
		return nil, fmt.Errorf("re-encode canonical value: %w", err)
	}
	return b, nil
}

func rewriteRegions(v Value, m pathMap) (Value, bool) {
	if len(v.Regions) == 0 {
		return v, false
	}
	out := Value{Object: v.Object, Regions: make([]Region, len(v.Regions))}
	changedAny := false
	for i, reg := range v.Regions {
		text, changed := reg.Grammar.rewrite(reg.Text, m)
		out.Regions[i] = Region{Grammar: reg.Grammar, Text: text}
		changedAny = changedAny || changed
	}
	if !changedAny {
		return v, false
	}
	return out, true
}
