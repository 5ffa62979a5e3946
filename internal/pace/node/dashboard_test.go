package node

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDashboardStartupRule is rule 6 of pace-node §3.4: the dashboard needs an admin surface,
// an admin surface other machines reach needs a token, and a token file holding nothing
// refuses the start rather than serving everyone.
func TestDashboardStartupRule(t *testing.T) {
	dir := t.TempDir()
	file := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good, empty, blank := file("good", "hunter2-token\n"), file("empty", ""), file("blank", "  \n\t\n")
	refused := map[string][]string{
		"--dashboard without --admin-listen":    {"--dashboard"},
		"a wildcard admin bind without a token": {"--admin-listen=0.0.0.0:9260"},
		"an address bind without a token":       {"--admin-listen=10.0.0.7:9260", "--dashboard"},
		"an empty token file":                   {"--admin-listen=9260", "--dashboard", "--dashboard-token-file=" + empty},
		"a whitespace-only token file":          {"--admin-listen=0.0.0.0:9260", "--dashboard-token-file=" + blank},
		"a missing token file":                  {"--admin-listen=9260", "--dashboard-token-file=" + filepath.Join(dir, "none")},
	}
	for name, args := range refused {
		p := plan(t, args...)
		var out bytes.Buffer
		if status := p.PrintSurfaces(&out); status != 2 || !strings.Contains(out.String(), "rule 6:") {
			t.Errorf("%s: status %d\n%s", name, status, out.String())
		}
	}
	for name, args := range map[string][]string{
		"a loopback dashboard without a token": {"--admin-listen=9260", "--dashboard"},
		"localhost without a token":            {"--admin-listen=localhost:9260", "--dashboard"},
		"a wildcard dashboard with a token":    {"--admin-listen=0.0.0.0:9260", "--dashboard", "--dashboard-token-file=" + good},
		"metrics alone on loopback":            {"--admin-listen=9260"},
	} {
		p := plan(t, args...)
		var out bytes.Buffer
		if status := p.PrintSurfaces(&out); status != 0 {
			t.Errorf("%s: status %d\n%s", name, status, out.String())
		}
		if strings.Contains(out.String(), "hunter2") {
			t.Errorf("%s: the token is printed:\n%s", name, out.String())
		}
	}
	if p := plan(t, "--admin-listen=0.0.0.0:9260", "--dashboard", "--dashboard-token-file="+good); !p.dashboardToken.Set() {
		t.Error("the token was not kept for the start")
	}
}
