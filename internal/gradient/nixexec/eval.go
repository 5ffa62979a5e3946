package nixexec

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// EntryPoint is one attribute a wildcard selected, with its derivation.
type EntryPoint struct {
	Attr    string // e.g. packages.x86_64-linux.hello
	DrvPath string
}

// AttrError is an attribute (or a whole pattern) that failed to evaluate.
type AttrError struct {
	Attr    string // the attribute path, or the pattern when the pattern as a whole failed
	Message string
}

// Evaluation is what EvaluateWildcards found. Errors (per attribute or pattern, including
// patterns that matched nothing) do not fail the call.
type Evaluation struct {
	EntryPoints []EntryPoint
	Errors      []AttrError
}

// maxIsolatedAttrs bounds how many attributes of a failing pattern are evaluated one by one
// to find the failing ones; a larger pattern is reported failed as a whole.
const maxIsolatedAttrs = 256

// EvaluateWildcards expands the wildcards against the flake at ref and forces each selected
// attribute's drvPath, which writes the .drv files into the store. A pattern that matches
// nothing is an error of the evaluation ("no match"), as is an attribute whose evaluation
// throws or that is not a derivation; errors Nix cannot catch inside the language are
// narrowed to the pattern and then to the attribute that raised them.
func (n *Nix) EvaluateWildcards(ctx context.Context, ref string, wildcards []string) (Evaluation, error) {
	patterns, err := ParseWildcards(wildcards)
	if err != nil {
		return Evaluation{}, err
	}
	var include, exclude []Pattern
	for _, p := range patterns {
		if p.Exclude {
			exclude = append(exclude, p)
		} else {
			include = append(include, p)
		}
	}
	res, err := n.walk(ctx, ref, walkSpec{Include: include, Exclude: exclude, Force: true})
	if err == nil {
		return res.evaluation(include), nil
	}
	var cmdErr *CommandError
	if !errors.As(err, &cmdErr) {
		return Evaluation{}, err
	}
	var ev Evaluation
	for _, p := range include {
		one, err := n.evaluatePattern(ctx, ref, p, exclude)
		if err != nil {
			return Evaluation{}, err
		}
		ev.EntryPoints = append(ev.EntryPoints, one.EntryPoints...)
		ev.Errors = append(ev.Errors, one.Errors...)
	}
	ev.EntryPoints = uniqueEntryPoints(ev.EntryPoints)
	return ev, nil
}

// evaluatePattern evaluates one include pattern; when Nix fails on it, it lists the matching
// attributes without forcing them and forces each alone.
func (n *Nix) evaluatePattern(ctx context.Context, ref string, p Pattern, exclude []Pattern) (Evaluation, error) {
	res, err := n.walk(ctx, ref, walkSpec{Include: []Pattern{p}, Exclude: exclude, Force: true})
	if err == nil {
		return res.evaluation([]Pattern{p}), nil
	}
	var cmdErr *CommandError
	if !errors.As(err, &cmdErr) {
		return Evaluation{}, err
	}
	patternFailed := Evaluation{Errors: []AttrError{{Attr: p.String(), Message: cmdErr.Message()}}}
	listed, err := n.walk(ctx, ref, walkSpec{Include: []Pattern{p}, Exclude: exclude})
	if err != nil {
		if errors.As(err, &cmdErr) {
			return patternFailed, nil
		}
		return Evaluation{}, err
	}
	if len(listed.Entries) > maxIsolatedAttrs {
		return patternFailed, nil
	}
	return n.isolate(ctx, ref, p, listed)
}

// isolate evaluates each attribute a failing pattern listed on its own.
func (n *Nix) isolate(ctx context.Context, ref string, p Pattern, listed walkResult) (Evaluation, error) {
	var cmdErr *CommandError
	var ev Evaluation
	for _, e := range listed.Entries {
		if e.Error != "" {
			ev.Errors = append(ev.Errors, AttrError{Attr: AttrPath(e.Attr), Message: e.Error})
			continue
		}
		lit := Pattern{Segments: e.Attr, Literal: make([]bool, len(e.Attr))}
		for i := range lit.Literal {
			lit.Literal[i] = true
		}
		one, err := n.walk(ctx, ref, walkSpec{Include: []Pattern{lit}, Force: true, Last: p.lastKind()})
		if err != nil {
			if !errors.As(err, &cmdErr) {
				return Evaluation{}, err
			}
			ev.Errors = append(ev.Errors, AttrError{Attr: AttrPath(e.Attr), Message: cmdErr.Message()})
			continue
		}
		sub := one.evaluation([]Pattern{lit})
		ev.EntryPoints = append(ev.EntryPoints, sub.EntryPoints...)
		ev.Errors = append(ev.Errors, sub.Errors...)
	}
	return ev, nil
}

// walkResult is the walker's JSON answer.
type walkResult struct {
	Counts  []int `json:"counts"`
	Entries []struct {
		Attr  []string `json:"attr"`
		Drv   *string  `json:"drv"`
		Error string   `json:"error"`
	} `json:"entries"`
}

func (r walkResult) evaluation(include []Pattern) Evaluation {
	var ev Evaluation
	for i, c := range r.Counts {
		if c == 0 && i < len(include) {
			ev.Errors = append(ev.Errors, AttrError{Attr: include[i].String(), Message: "no attribute matches " + include[i].String()})
		}
	}
	for _, e := range r.Entries {
		attr := AttrPath(e.Attr)
		switch {
		case e.Error != "":
			ev.Errors = append(ev.Errors, AttrError{Attr: attr, Message: attr + ": " + e.Error})
		case e.Drv == nil:
			ev.Errors = append(ev.Errors, AttrError{Attr: attr, Message: attr + ": evaluation failed (throw or assertion)"})
		default:
			ev.EntryPoints = append(ev.EntryPoints, EntryPoint{Attr: attr, DrvPath: *e.Drv})
		}
	}
	return ev
}

// walkSpec is one run of the walker: patterns to include and exclude, whether to force the
// matched values, and (for literal paths listed from a pattern) how to treat the final
// segment.
type walkSpec struct {
	Include, Exclude []Pattern
	Force            bool
	Last             string
}

// walk runs the walker expression once.
func (n *Nix) walk(ctx context.Context, ref string, ws walkSpec) (walkResult, error) {
	spec, err := json.Marshal(ws.json())
	if err != nil {
		return walkResult{}, fmt.Errorf("nixexec: walker spec: %w", err)
	}
	expr := "(" + walkerExpr + ") { ref = " + nixString(ref) + "; spec = " + nixString(string(spec)) + "; }"
	out, err := n.output(ctx, "nix", n.nixArgs("eval", "--json", "--expr", expr)...)
	if err != nil {
		return walkResult{}, err
	}
	var res walkResult
	if err := json.Unmarshal(out, &res); err != nil {
		return walkResult{}, fmt.Errorf("nixexec: walker output: %w", err)
	}
	return res, nil
}

type walkSegment struct {
	K string `json:"k"`
	N string `json:"n,omitempty"`
}

func (ws walkSpec) json() map[string]any {
	conv := func(ps []Pattern) [][]walkSegment {
		out := make([][]walkSegment, 0, len(ps))
		for _, p := range ps {
			segs := make([]walkSegment, len(p.Segments))
			for i, s := range p.Segments {
				segs[i] = walkSegment{K: p.kind(i), N: s}
				if segs[i].K != "lit" {
					segs[i].N = ""
				}
			}
			out = append(out, segs)
		}
		return out
	}
	m := map[string]any{"include": conv(ws.Include), "exclude": conv(ws.Exclude), "force": ws.Force}
	if ws.Last != "" {
		m["last"] = ws.Last
	}
	return m
}

// kind is the walker's name for segment i: "*", "#" or "lit".
func (p Pattern) kind(i int) string {
	if s := p.Segments[i]; !p.Literal[i] && (s == AnyRecurse || s == AnyFlat) {
		return s
	}
	return "lit"
}

func (p Pattern) lastKind() string { return p.kind(len(p.Segments) - 1) }

// nixString quotes s as a Nix string literal: backslash, double quote and "${" are escaped,
// and the control characters Nix has escapes for are written as escapes.
func nixString(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "${", `\${`, "\n", `\n`, "\r", `\r`, "\t", `\t`)
	return `"` + r.Replace(s) + `"`
}

func uniqueEntryPoints(eps []EntryPoint) []EntryPoint {
	seen := map[string]bool{}
	out := eps[:0]
	for _, e := range eps {
		if !seen[e.Attr] {
			seen[e.Attr] = true
			out = append(out, e)
		}
	}
	return out
}
