package dashboard

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestEveryRouteNeedsTheToken(t *testing.T) {
	h := newTestHandler(t, leaderSource(), "s3cret-token")
	basic := func(user, pass string) string {
		return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))
	}
	cases := []struct {
		name, auth string
		want       int
	}{
		{"no credential", "", http.StatusUnauthorized},
		{"bearer, right token", "Bearer s3cret-token", http.StatusOK},
		{"bearer, wrong token", "Bearer s3cret-tokem", http.StatusUnauthorized},
		{"bearer, a prefix of the token", "Bearer s3cret", http.StatusUnauthorized},
		{"basic, any username", basic("alice", "s3cret-token"), http.StatusOK},
		{"basic, empty username", basic("", "s3cret-token"), http.StatusOK},
		{"basic, wrong password", basic("alice", "nope"), http.StatusUnauthorized},
		{"basic, not base64", "Basic %%%", http.StatusUnauthorized},
		{"another scheme", "Digest s3cret-token", http.StatusUnauthorized},
	}
	for _, route := range []string{"/fleet", "/fleet.json", "/fleet.txt", "/fleet/series.json?range=1h", "/fleet/static/fleet.js", "/fleet/nothing"} {
		for _, c := range cases {
			resp, body := get(h, route, "Authorization", c.auth)
			if c.want == http.StatusOK && resp.StatusCode == http.StatusNotFound && route == "/fleet/nothing" {
				continue
			}
			if resp.StatusCode != c.want {
				t.Errorf("%s, %s: %d, want %d", route, c.name, resp.StatusCode, c.want)
			}
			if resp.StatusCode == http.StatusUnauthorized {
				if !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Basic ") || strings.Contains(body, "s3cret") {
					t.Errorf("%s, %s: the refusal %q / %q", route, c.name, resp.Header.Get("WWW-Authenticate"), body)
				}
			}
		}
	}
}

// TestATokenInTheAddressBarBuysACookie: ?token= answers a redirect to the same page without
// the token, setting an HttpOnly, SameSite=Strict cookie that then stands for the token.
func TestATokenInTheAddressBarBuysACookie(t *testing.T) {
	h := newTestHandler(t, leaderSource(), "s3cret-token")
	resp, _ := get(h, "/fleet?token=s3cret-token&x=1")
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/fleet?x=1" {
		t.Fatalf("status %d, location %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	cookies := resp.Cookies()
	if len(cookies) != 1 || cookies[0].Name != CookieName || !cookies[0].HttpOnly || cookies[0].SameSite != http.SameSiteStrictMode {
		t.Fatalf("cookies %+v", cookies)
	}
	if strings.Contains(cookies[0].Value, "s3cret") {
		t.Fatal("the cookie carries the token itself")
	}
	if resp, _ := get(h, "/fleet.json", "Cookie", CookieName+"="+cookies[0].Value); resp.StatusCode != http.StatusOK {
		t.Fatalf("with the cookie: %d", resp.StatusCode)
	}
	if resp, _ := get(h, "/fleet.json", "Cookie", CookieName+"=0000"); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("with a forged cookie: %d", resp.StatusCode)
	}
	if resp, _ := get(h, "/fleet?token=wrong"); resp.StatusCode != http.StatusUnauthorized || len(resp.Cookies()) != 0 {
		t.Fatalf("a wrong ?token=: %d, cookies %v", resp.StatusCode, resp.Cookies())
	}
	other := newTestHandler(t, leaderSource(), "another-token")
	if resp, _ := get(other, "/fleet.json", "Cookie", CookieName+"="+cookies[0].Value); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("a cookie of another token: %d", resp.StatusCode)
	}
}

func TestWithoutATokenTheDashboardIsOpen(t *testing.T) {
	h := newTestHandler(t, leaderSource(), "")
	if resp, _ := get(h, "/fleet.json"); resp.StatusCode != http.StatusOK {
		t.Fatalf("%d", resp.StatusCode)
	}
}

func TestAnEmptyTokenFileFailsClosed(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, content := range []string{"", " \n\t\r\n"} {
		if _, err := LoadToken(write("empty", content)); !errors.Is(err, ErrEmptyToken) {
			t.Errorf("%q: %v", content, err)
		}
	}
	if _, err := LoadToken(write("big", strings.Repeat("a", MaxTokenFile+1))); err == nil {
		t.Error("an oversized token file was accepted")
	}
	if _, err := LoadToken(filepath.Join(dir, "missing")); err == nil {
		t.Error("a missing token file was accepted")
	}
	tok, err := LoadToken(write("ok", "  tok3n\n"))
	if err != nil || !tok.equal("tok3n") {
		t.Fatalf("%v", err)
	}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s"} {
		if s := fmt.Sprintf(verb, tok); strings.Contains(s, "tok3n") {
			t.Errorf("%s prints the token: %s", verb, s)
		}
	}
}
