package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/api"
	"github.com/buildfleet/buildfleet/internal/gradient/apiclient"
	"github.com/buildfleet/buildfleet/internal/gradient/nixexec/nixexectest"
	"github.com/buildfleet/buildfleet/internal/gradient/peertoken"
	"github.com/buildfleet/buildfleet/internal/gradient/session"
)

// TestServerDialedWorkerEndToEnd runs the server-dialed mode (gradient-protocol §4.1) with
// real processes and real Nix: a worker listening with --listen is registered with its URL
// through `gradient-server admin worker register --url`; while its accepted server tokens
// file holds another token's hash it refuses the server 401 and the server keeps that as the
// worker's offline reason; once the file holds the right hash the server's next dial is
// accepted and the worker builds the flake.
func TestServerDialedWorkerEndToEnd(t *testing.T) {
	flake := nixexectest.NewFlake(t)
	dataDir, addr := t.TempDir(), freeAddr(t)
	key, client := bootstrapKey(t, addr, dataDir)
	srv := startServer(t, addr, dataDir)
	project := dialedProject(t, client, flake)

	workerID, listen, baseDir := newWorkerID(t), freeAddr(t), t.TempDir()
	workerURL := "ws://" + listen + "/proto"
	token := adminRegister(t, addr, key, project.ID, workerID, workerURL)
	tokensFile := filepath.Join(baseDir, "accepted-server-tokens")
	writeTokens(t, tokensFile, project.ID+":"+peertoken.SHA256Hex("not-"+token))
	worker := startListeningWorker(t, workerID, listen, baseDir, tokensFile)

	t.Run("a server presenting a wrong token is refused 401, kept as the offline reason", func(t *testing.T) {
		worker.waitLog(`refused a server.*code=401`, time.Minute)
		want := "rejected by peer: 401 " + session.ReasonWrongWorkerOrToken
		waitFor(t, "the offline reason", 30*time.Second, func() (bool, string) {
			w, err := client.Worker(bg, workerID)
			if err != nil {
				return false, err.Error()
			}
			return w.Status == api.WorkerOffline && w.OfflineReason == want, w.Status + ": " + w.OfflineReason
		})
		srv.waitLog(`dialing a worker over ws://`, 5*time.Second)
	})

	t.Run("the right token is accepted and the server-dialed worker builds the flake", func(t *testing.T) {
		writeTokens(t, tokensFile, "# the server's token for the project\n"+project.ID+":"+argon2Of(t, token))
		worker.waitLog(`server session running`, 2*time.Minute)
		waitFor(t, "the worker to be live", 30*time.Second, func() (bool, string) {
			w, err := client.Worker(bg, workerID)
			return err == nil && w.Status == api.WorkerLive, w.Status
		})
		ev, err := client.StartEvaluation(bg, project.ID, api.StartEvaluationRequest{Commit: flake.Commit})
		if err != nil {
			t.Fatal(err)
		}
		f := &fleet{t: t, srv: srv, api: client, flake: flake, project: project}
		d := f.completed(t, ev.ID, 5*time.Minute)
		if len(d.Builds) != 3 {
			t.Fatalf("evaluation: %s", summary(d))
		}
		for _, name := range []string{"a", "b", "c"} {
			if b := buildNamed(t, d, name); b.Status != "Completed" {
				t.Fatalf("build %s: %s", name, b.Status)
			}
		}
	})

	for name, log := range map[string]string{"server": srv.log.String(), "worker": worker.log.String()} {
		if strings.Contains(log, token) {
			t.Errorf("the %s's log shows the dial token", name)
		}
	}
}

// dialedProject is the test flake's project, subscribed to a cache.
func dialedProject(t *testing.T, c *apiclient.Client, flake nixexectest.Flake) api.Project {
	t.Helper()
	cache, err := c.CreateCache(bg, api.CreateCacheRequest{Name: "main"})
	if err != nil {
		t.Fatal(err)
	}
	p, err := c.CreateProject(bg, api.CreateProjectRequest{Name: "dialed", RepoURL: flake.URL, Branch: "main",
		Wildcards: []string{"packages." + flake.System + ".*"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Subscribe(bg, p.ID, cache.ID); err != nil {
		t.Fatal(err)
	}
	return p
}

// adminRegister registers a server-dialed worker through the admin command and returns the
// token the server will present.
func adminRegister(t *testing.T, addr, key, projectID, workerID, url string) string {
	t.Helper()
	cmd := serverCmd("admin", "worker", "register", "--project="+projectID, "--url="+url, "--json", workerID)
	cmd.Env = append(cmd.Env, "GRADIENT_SERVER=http://"+addr, "GRADIENT_API_KEY="+key)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("admin worker register: %v\n%s", err, stderrOf(err))
	}
	var resp api.RegisterWorkerResponse
	if err := json.Unmarshal(out, &resp); err != nil || resp.Token == "" {
		t.Fatalf("register output: %v", err)
	}
	if r := resp.Registration; r.URL != url || !r.HasDialToken {
		t.Fatalf("registration %+v: want url %s with a dial token", r, url)
	}
	return resp.Token
}

func stderrOf(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return string(ee.Stderr)
	}
	return ""
}

func writeTokens(t *testing.T, path, text string) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(text+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil { // the worker never reads half a file
		t.Fatal(err)
	}
}

func argon2Of(t *testing.T, token string) string {
	t.Helper()
	h, err := peertoken.HashArgon2id(token, strings.NewReader(strings.Repeat("salt", 8)))
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// startListeningWorker runs gradient-worker in discoverable mode.
func startListeningWorker(t *testing.T, id, listen, baseDir, tokensFile string) *proc {
	t.Helper()
	cmd := exec.Command(workerBin, "--listen="+listen, "--accepted-server-tokens-file="+tokensFile,
		"--base-dir="+baseDir, "--log-level=debug")
	cmd.Env = append(os.Environ(), "GRADIENT_WORKER_ID="+id)
	w := startProc(t, "gradient-worker", cmd)
	w.waitLog(`listening for the server`, 30*time.Second)
	return w
}
