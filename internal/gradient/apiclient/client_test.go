package apiclient_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/buildfleet/buildfleet/internal/gradient/apiclient"
)

const key = "GRADsecretsecretsecretsecretsecretsecretsec"

func TestNewRefusesUnusableConfiguration(t *testing.T) {
	cases := map[string][2]string{
		"no scheme":        {"127.0.0.1:3000", key},
		"ftp":              {"ftp://host", key},
		"no host":          {"http://", key},
		"key without GRAD": {"http://h", "secretsecret"},
		"prefix only":      {"http://h", "GRAD"},
		"key with space":   {"http://h", "GRAD abc"},
	}
	for name, c := range cases {
		_, err := apiclient.New(c[0], c[1])
		if !errors.Is(err, apiclient.ErrBadConfig) {
			t.Errorf("%s: error %v, want ErrBadConfig", name, err)
		}
		if err != nil && c[1] != "GRAD" && strings.Contains(err.Error(), c[1]) {
			t.Errorf("%s: the error shows the key", name)
		}
	}
}

func TestRequestsCarryTheKeyAndDecodeErrors(t *testing.T) {
	var gotAuth, gotPath string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotAuth, gotPath = r.Header.Get("Authorization"), r.URL.EscapedPath()
		switch {
		case strings.HasSuffix(r.URL.Path, "/proxy"):
			w.WriteHeader(http.StatusBadGateway)
			w.Write([]byte("<html>bad gateway</html>"))
		default:
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusConflict)
			w.Write([]byte(`{"error":"a project named \"x\" already exists","code":"conflict"}`))
		}
	}))
	defer srv.Close()
	c, err := apiclient.New(srv.URL+"/", key)
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Project(t.Context(), "a b/c")
	var apiErr *apiclient.Error
	if !errors.As(err, &apiErr) || apiErr.Status != 409 || apiErr.Code != "conflict" || !strings.Contains(apiErr.Message, "already exists") {
		t.Fatalf("error %#v, want the decoded 409", err)
	}
	if gotAuth != key {
		t.Errorf("Authorization %q, want the bare GRAD key", gotAuth)
	}
	if gotPath != "/api/v1/projects/a%20b%2Fc" {
		t.Errorf("path %q, want one escaped segment", gotPath)
	}
	_, err = c.Project(t.Context(), "proxy")
	if apiclient.StatusOf(err) != http.StatusBadGateway || strings.Contains(err.Error(), "<html>") {
		t.Errorf("non-API answer: %v", err)
	}
	if strings.Contains(err.Error(), key) {
		t.Error("an error shows the key")
	}
	if apiclient.StatusOf(errors.New("x")) != 0 {
		t.Error("StatusOf of a plain error is not 0")
	}
}

func TestPeerKindIsChecked(t *testing.T) {
	c, err := apiclient.New("http://127.0.0.1:1", key)
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.SetRegistrationActive(t.Context(), apiclient.Peer{Kind: "teams", Ref: "x"}, "w", true)
	if !errors.Is(err, apiclient.ErrBadConfig) {
		t.Errorf("unknown peer kind: %v", err)
	}
}
