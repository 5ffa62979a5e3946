package admincli_test

import (
	"net"
	"strings"
	"testing"

	"github.com/buildfleet/buildfleet/internal/gradient/admincli"
)

func TestUsageErrorsExitTwo(t *testing.T) {
	c := bootstrapped(t)
	cases := map[string][]string{
		"no command":            {},
		"unknown command":       {"frobnicate"},
		"unknown subcommand":    {"project", "frobnicate"},
		"missing argument":      {"project", "show"},
		"extra argument":        {"project", "list", "x"},
		"unknown flag":          {"project", "list", "--verbose"},
		"missing required flag": {"project", "create", "p", "--repo-url", "https://e.invalid/p"},
		"both peers":            {"worker", "register", workerID, "--project", "p", "--cache", "c"},
		"no peer":               {"worker", "deactivate", workerID},
		"bad server URL":        {"project", "list", "--server", "ftp://example"},
		"bad key shape":         {"project", "list", "--api-key", "not-a-key"},
		"negative log offset":   {"build", "log", workerID, "--offset", "-1"},
		"follow with a limit":   {"build", "log", workerID, "--follow", "--limit", "5"},
		"both stores":           {"bootstrap", "--data-dir", "/x", "--database-url", "postgres://h/db"},
	}
	for name, args := range cases {
		t.Run(name, func(t *testing.T) {
			r := c.run(args...)
			if r.code != admincli.ExitUsage || r.stdout != "" {
				t.Errorf("exit %d (want 2), stdout %q, stderr %q", r.code, r.stdout, r.stderr)
			}
			if !strings.Contains(r.stderr, "usage") {
				t.Errorf("stderr %q does not show usage", r.stderr)
			}
		})
	}
	delete(c.env, admincli.EnvAPIKey)
	if r := c.run("project", "list"); r.code != admincli.ExitUsage || !strings.Contains(r.stderr, admincli.EnvAPIKey) {
		t.Errorf("without a key: exit %d, stderr %q", r.code, r.stderr)
	}
}

func TestHelpExitsZero(t *testing.T) {
	c := bootstrapped(t)
	for _, args := range [][]string{{"help"}, {"--help"}, {"worker", "register", "-h"}} {
		r := c.run(args...)
		if r.code != admincli.ExitOK || !strings.Contains(r.stdout, "usage") {
			t.Errorf("%v: exit %d, stdout %q", args, r.code, r.stdout)
		}
	}
}

func TestServerAndAPIErrorsExitOne(t *testing.T) {
	c := bootstrapped(t)
	c.ok("project", "create", "p", "--repo-url", "https://e.invalid/p", "--wildcard", "*")
	if stderr := c.expect(admincli.ExitError, "project", "create", "p", "--repo-url", "https://e.invalid/p", "--wildcard", "*"); !strings.Contains(stderr, "already exists") || !strings.Contains(stderr, "409") {
		t.Errorf("duplicate project: %s", stderr)
	}
	c.expect(admincli.ExitError, "project", "show", "nope")
	c.expect(admincli.ExitError, "eval", "start", "p", "not-a-commit")

	wrong := c.run("project", "list", "--api-key", "GRADwrongwrongwrongwrongwrongwrongwrongwrongwro")
	if wrong.code != admincli.ExitError || !strings.Contains(wrong.stderr, "401") || strings.Contains(wrong.stderr, "GRADwrong") {
		t.Errorf("wrong key: exit %d, stderr %q", wrong.code, wrong.stderr)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String()
	ln.Close()
	if r := c.run("project", "list", "--server", closed); r.code != admincli.ExitError {
		t.Errorf("unreachable server: exit %d, stderr %q", r.code, r.stderr)
	}
}
