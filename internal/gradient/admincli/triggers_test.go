package admincli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/buildfleet/buildfleet/internal/gradient/admincli"
	"github.com/buildfleet/buildfleet/internal/gradient/api"
)

func TestProjectSetChangesOnlyWhatItIsGiven(t *testing.T) {
	c := bootstrapped(t)
	c.ok("project", "create", "demo", "--repo-url", "https://example.org/demo.git", "--wildcard", "packages.*")
	var out api.ProjectTriggers
	c.okJSON(&out, "project", "set", "demo", "--branch", "main", "--branch", "release/*", "--poll", "on")
	if strings.Join(out.Branches, " ") != "main release/*" || !out.Poll || out.Tags {
		t.Fatalf("after the first set: %+v", out)
	}
	c.okJSON(&out, "project", "set", "demo", "--tags")
	if len(out.Branches) != 2 || !out.Poll || !out.Tags {
		t.Fatalf("--tags alone changed more: %+v", out)
	}
	c.okJSON(&out, "project", "set", "demo", "--default-branch", "--tags=false", "--poll", "off")
	if len(out.Branches) != 0 || out.Poll || out.Tags {
		t.Fatalf("after resetting: %+v", out)
	}
	if show := c.ok("project", "show", "demo"); !strings.Contains(show, "Follows") || !strings.Contains(show, "Webhook secret") {
		t.Errorf("project show:\n%s", show)
	}
	empty := filepath.Join(t.TempDir(), "empty")
	os.WriteFile(empty, []byte("\n"), 0o600)
	for _, args := range [][]string{
		{"project", "set", "demo"},
		{"project", "set", "demo", "--poll", "sometimes"},
		{"project", "set", "demo", "--branch", "main", "--default-branch"},
		{"project", "set", "demo", "--webhook-secret-file", empty, "--no-webhook-secret"},
	} {
		c.expect(admincli.ExitUsage, args...)
	}
	if stderr := c.expect(admincli.ExitError, "project", "set", "demo", "--webhook-secret-file", empty); !strings.Contains(stderr, "empty") {
		t.Errorf("an empty secret file: %s", stderr)
	}
	c.expect(admincli.ExitError, "project", "set", "demo", "--branch", "-x")
}
