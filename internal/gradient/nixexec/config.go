package nixexec

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
)

// Config is the part of the local Nix configuration a worker advertises
// (gradient-protocol §5).
type Config struct {
	System         string
	ExtraPlatforms []string
	SystemFeatures []string
}

// Systems is the system followed by the extra platforms, without duplicates: the
// architectures a worker can build for.
func (c Config) Systems() []string {
	out := []string{c.System}
	for _, p := range c.ExtraPlatforms {
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// ShowConfig reads system, extra-platforms and system-features from `nix show-config --json`.
func (n *Nix) ShowConfig(ctx context.Context) (Config, error) {
	out, err := n.output(ctx, "nix", n.nixArgs("show-config", "--json")...)
	if err != nil {
		return Config{}, err
	}
	return ParseShowConfig(out)
}

// ParseShowConfig decodes `nix show-config --json` output.
func ParseShowConfig(out []byte) (Config, error) {
	var raw map[string]struct {
		Value json.RawMessage `json:"value"`
	}
	if err := json.Unmarshal(out, &raw); err != nil {
		return Config{}, fmt.Errorf("nixexec: show-config output: %w", err)
	}
	var c Config
	if err := json.Unmarshal(raw["system"].Value, &c.System); err != nil || c.System == "" {
		return Config{}, fmt.Errorf("nixexec: show-config: no system")
	}
	// A missing or oddly typed list setting is left empty rather than failing the worker.
	_ = json.Unmarshal(raw["extra-platforms"].Value, &c.ExtraPlatforms)
	_ = json.Unmarshal(raw["system-features"].Value, &c.SystemFeatures)
	return c, nil
}
