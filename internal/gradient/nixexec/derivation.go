package nixexec

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Derivation is one .drv as the worker reports it (the shape of DiscoveredDerivation).
type Derivation struct {
	DrvPath string
	// Outputs maps output name to store path (empty for a floating content-addressed output).
	Outputs map[string]string
	// InputDrvs maps each input .drv to the output names this derivation uses from it.
	InputDrvs        map[string][]string
	InputSrcs        []string
	System           string
	RequiredFeatures []string
	// TimeoutSecs and MaxSilentSecs are the derivation's own timeout and maxSilent; 0 when
	// unset.
	TimeoutSecs      uint64
	MaxSilentSecs    uint64
	PreferLocalBuild bool
	AllowSubstitutes bool
	IsFixedOutput    bool
	Pname            string
}

// Dependencies lists the input .drv paths, sorted.
func (d Derivation) Dependencies() []string {
	out := make([]string, 0, len(d.InputDrvs))
	for p := range d.InputDrvs {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// OutputNames lists the output names, sorted.
func (d Derivation) OutputNames() []string {
	out := make([]string, 0, len(d.Outputs))
	for n := range d.Outputs {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// ShowDerivations reads the given .drv files, and with recursive their whole closure of
// input derivations, through `nix show-derivation`.
func (n *Nix) ShowDerivations(ctx context.Context, drvs []string, recursive bool) (map[string]Derivation, error) {
	if len(drvs) == 0 {
		return map[string]Derivation{}, nil
	}
	args := []string{"show-derivation"}
	if recursive {
		args = append(args, "--recursive")
	}
	out, err := n.output(ctx, "nix", n.nixArgs(append(args, drvs...)...)...)
	if err != nil {
		return nil, err
	}
	return ParseShowDerivation(out)
}

// rawDerivation is one entry of `nix show-derivation` JSON (nix 2.8).
type rawDerivation struct {
	Outputs map[string]struct {
		Path     string `json:"path"`
		HashAlgo string `json:"hashAlgo"`
		Hash     string `json:"hash"`
	} `json:"outputs"`
	InputSrcs []string            `json:"inputSrcs"`
	InputDrvs map[string][]string `json:"inputDrvs"`
	System    string              `json:"system"`
	Env       map[string]string   `json:"env"`
}

// ParseShowDerivation decodes `nix show-derivation` output.
func ParseShowDerivation(out []byte) (map[string]Derivation, error) {
	var raw map[string]rawDerivation
	if err := json.Unmarshal(out, &raw); err != nil {
		return nil, fmt.Errorf("nixexec: show-derivation output: %w", err)
	}
	res := make(map[string]Derivation, len(raw))
	for path, r := range raw {
		d, err := fromRaw(path, r)
		if err != nil {
			return nil, err
		}
		res[path] = d
	}
	return res, nil
}

func fromRaw(path string, r rawDerivation) (Derivation, error) {
	env, err := derivationAttrs(r.Env)
	if err != nil {
		return Derivation{}, fmt.Errorf("nixexec: %s: %w", path, err)
	}
	d := Derivation{
		DrvPath: path, Outputs: map[string]string{}, InputDrvs: r.InputDrvs,
		InputSrcs: r.InputSrcs, System: r.System,
		RequiredFeatures: env.list("requiredSystemFeatures"),
		TimeoutSecs:      env.uint("timeout"),
		MaxSilentSecs:    env.uint("maxSilent"),
		PreferLocalBuild: env.bool("preferLocalBuild", false),
		AllowSubstitutes: env.bool("allowSubstitutes", true),
		Pname:            env.str("pname"),
		IsFixedOutput:    env.str("outputHash") != "",
	}
	if d.InputDrvs == nil {
		d.InputDrvs = map[string][]string{}
	}
	for name, o := range r.Outputs {
		d.Outputs[name] = o.Path
		if o.Hash != "" {
			d.IsFixedOutput = true
		}
	}
	return d, nil
}

// attrs are a derivation's attributes: the plain environment, or the __json of
// __structuredAttrs.
type attrs map[string]any

func derivationAttrs(env map[string]string) (attrs, error) {
	a := attrs{}
	if js, ok := env["__json"]; ok {
		if err := json.Unmarshal([]byte(js), &a); err != nil {
			return nil, fmt.Errorf("__json: %w", err)
		}
		return a, nil
	}
	for k, v := range env {
		a[k] = v
	}
	return a, nil
}

func (a attrs) str(k string) string {
	switch v := a[k].(type) {
	case string:
		return v
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	case bool:
		if v {
			return "1"
		}
	}
	return ""
}

// list reads a space-separated string (plain env) or a JSON list (structured attrs).
func (a attrs) list(k string) []string {
	if l, ok := a[k].([]any); ok {
		var out []string
		for _, e := range l {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return strings.Fields(a.str(k))
}

func (a attrs) uint(k string) uint64 {
	v, err := strconv.ParseUint(strings.TrimSpace(a.str(k)), 10, 64)
	if err != nil {
		return 0
	}
	return v
}

// bool reads Nix's env encoding of a boolean: "1" is true, "" false; absent is def.
func (a attrs) bool(k string, def bool) bool {
	v, ok := a[k]
	if !ok {
		return def
	}
	if b, ok := v.(bool); ok {
		return b
	}
	return a.str(k) == "1"
}
