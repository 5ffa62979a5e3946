package admincli_test

import (
	"strings"
	"testing"

	"github.com/buildfleet/buildfleet/internal/gradient/admincli"
)

// gradient-server §14: `cache upstream add|list|remove` against a running API.
func TestCacheUpstreamCommands(t *testing.T) {
	c := bootstrapped(t)
	c.ok("cache", "create", "main")
	const key = "cache.nixos.org-1:6NCHdD59X431o0gWypbMrAURkbJ16ZPMQFGspcDShjY="
	if out := c.ok("cache", "upstream", "add", "main", "https://cache.nixos.org/", "--key", key); !strings.Contains(out, "https://cache.nixos.org,") &&
		!strings.Contains(out, "from https://cache.nixos.org") {
		t.Errorf("add printed %q", out)
	}
	if out := c.ok("cache", "upstream", "list", "main"); !strings.Contains(out, "https://cache.nixos.org") || !strings.Contains(out, key) {
		t.Errorf("list printed %q", out)
	}
	if r := c.run("cache", "upstream", "add", "main", "ftp://x.example", "--key", key); r.code != admincli.ExitError || !strings.Contains(r.stderr, "http") {
		t.Errorf("a bad URL: exit %d, stderr %q", r.code, r.stderr)
	}
	if r := c.run("cache", "upstream", "add", "main", "https://x.example"); r.code != admincli.ExitUsage {
		t.Errorf("no --key: exit %d, stderr %q", r.code, r.stderr)
	}
	c.ok("cache", "upstream", "remove", "main", "https://cache.nixos.org")
	if out := c.ok("cache", "upstream", "list", "main"); strings.Contains(out, "cache.nixos.org") {
		t.Errorf("list after remove printed %q", out)
	}
}
