package upstream

import (
	"errors"
	"strings"
	"testing"
)

func TestCheckURL(t *testing.T) {
	cases := []struct{ in, want string }{
		{"https://cache.nixos.org", "https://cache.nixos.org"},
		{"https://cache.nixos.org/", "https://cache.nixos.org"},
		{"http://127.0.0.1:8080/sub/", "http://127.0.0.1:8080/sub"},
		{"file:///srv/cache", "file:///srv/cache"},
		{"ftp://example.org", ""},
		{"s3://bucket", ""},
		{"https://user:secret@example.org", ""},
		{"https://example.org/?x=1", ""},
		{"https://example.org/#f", ""},
		{"file://host/srv", ""},
		{"file:relative", ""},
		{"file:///", ""},
		{"https://", ""},
		{"", ""},
		{"https://exa mple.org", ""},
	}
	for _, c := range cases {
		got, err := CheckURL(c.in)
		if c.want == "" {
			if err == nil || !errors.Is(err, ErrBadUpstream) {
				t.Errorf("CheckURL(%q) = %q, %v; want ErrBadUpstream", c.in, got, err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("CheckURL(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}

func TestCheckURLKeepsSecretsOutOfErrors(t *testing.T) {
	_, err := CheckURL("https://user:hunter2@example.org")
	if err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("error %v", err)
	}
}

func TestCheckKey(t *testing.T) {
	good := "cache.nixos.org-1:6NCHdD59X431o0gWypbMrAURkbJ16ZPMQFGspcDShjY="
	if got, err := CheckKey(" " + good + "\n"); err != nil || got != good {
		t.Fatalf("CheckKey(good) = %q, %v", got, err)
	}
	for _, bad := range []string{"", "nokey", ":6NCHdD59X431o0gWypbMrAURkbJ16ZPMQFGspcDShjY=", "k:notbase64!",
		"k:AAAA", "a b:6NCHdD59X431o0gWypbMrAURkbJ16ZPMQFGspcDShjY="} {
		if _, err := CheckKey(bad); !errors.Is(err, ErrBadUpstream) {
			t.Errorf("CheckKey(%q) = %v, want ErrBadUpstream", bad, err)
		}
	}
}
