package main

import (
	"crypto/subtle"
	"encoding/pem"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/api"
	"github.com/buildfleet/buildfleet/internal/gradient/apiclient"
	"github.com/buildfleet/buildfleet/internal/gradient/nixexec/nixexectest"
)

// gitHTTPS serves the repositories under root with git's own smart-HTTP backend over TLS,
// behind HTTP basic authentication with one username and token, the way a forge serves a
// private repository to a token. It returns the base URL and a CA file for git.
func gitHTTPS(t *testing.T, root, username, token string) (string, string) {
	t.Helper()
	execPath, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		t.Fatal(err)
	}
	backend := &cgi.Handler{Path: filepath.Join(strings.TrimSpace(string(execPath)), "git-http-backend"),
		Env: []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1"}}
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, p, ok := r.BasicAuth()
		if !ok || u != username || subtle.ConstantTimeCompare([]byte(p), []byte(token)) != 1 {
			w.Header().Set("WWW-Authenticate", `Basic realm="forge"`)
			http.Error(w, "authentication required", http.StatusUnauthorized)
			return
		}
		backend.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	ca := filepath.Join(t.TempDir(), "ca.pem")
	cert := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	if err := os.WriteFile(ca, cert, 0o644); err != nil {
		t.Fatal(err)
	}
	return srv.URL, ca
}

// A private repository over HTTPS: with the project's token (set from a file through the
// admin command) the evaluation fetches it and completes; without one it fails at once,
// saying so; neither process logs the token (gradient-server §13).
func TestPrivateRepositoryOverHTTPSWithAToken(t *testing.T) {
	const token = "glpat-e2e0123456789abcdef"
	flake := nixexectest.NewFlake(t)
	base, ca := gitHTTPS(t, filepath.Dir(flake.Dir), "oauth2", token)
	repoURL := base + "/" + filepath.Base(flake.Dir)
	dataDir, addr := t.TempDir(), freeAddr(t)
	key, c := bootstrapKey(t, addr, dataDir)
	srv := startServer(t, addr, dataDir)
	f := &fleet{t: t, srv: srv, api: c, flake: flake, key: key, workerID: newWorkerID(t), baseDir: t.TempDir()}
	withToken := privateProject(t, c, "with-token", repoURL)
	without := privateProject(t, c, "without", repoURL)
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out := admin(t, addr, key, "project", "https-token", "set", "with-token", "--token-file", tokenFile, "--username", "oauth2"); strings.Contains(out, token) {
		t.Fatalf("https-token set printed the token: %s", out)
	}

	var peers []string
	for _, p := range []api.Project{withToken, without} {
		reg, err := c.RegisterWorker(bg, apiclient.Peer{Kind: apiclient.ProjectPeer, Ref: p.ID}, api.RegisterWorkerRequest{WorkerID: f.workerID})
		if err != nil {
			t.Fatal(err)
		}
		peers = append(peers, reg.PeersFileLine)
	}
	w := startWorker(t, srv, f.workerID, f.baseDir, strings.Join(peers, "\n"), "GIT_SSL_CAINFO="+ca)

	f.completed(t, startEval(t, c, withToken, flake), 2*time.Minute, w, srv.proc)
	failed := f.settled(t, startEval(t, c, without, flake), time.Minute)
	text := summary(failed)
	if failed.Evaluation.Status != "Failed" || !strings.Contains(text, "no https token") || strings.Contains(text, "after 3 attempts") {
		t.Fatalf("the project without a token: %s", text)
	}
	checkNoKeyLeft(t, f.baseDir)
	for _, p := range []*proc{w, srv.proc} {
		if strings.Contains(p.log.String(), token) {
			t.Errorf("%s logged the token", p.name)
		}
	}
}
