package main

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/admincli"
	"github.com/buildfleet/buildfleet/internal/gradient/aeadbox"
	"github.com/buildfleet/buildfleet/internal/gradient/api"
	"github.com/buildfleet/buildfleet/internal/gradient/apiclient"
	"github.com/buildfleet/buildfleet/internal/gradient/nixexec/nixexectest"
	"github.com/buildfleet/buildfleet/internal/gradient/repocred"
)

// sshServer is a real sshd on a loopback port with its own host key, configuration and
// authorized keys, serving git for the user running the test.
type sshServer struct {
	*proc
	port           int
	authorizedKeys string
}

const sshdPath = "/usr/sbin/sshd"

func startSSHD(t *testing.T) *sshServer {
	t.Helper()
	if _, err := os.Stat(sshdPath); err != nil {
		t.Fatalf("%s: %v (scripts/deps.sh test installs openssh-server)", sshdPath, err)
	}
	// sshd refuses to start without its privilege separation directory, which only an init
	// system creates; as root the test makes it.
	if _, err := os.Stat("/run/sshd"); err != nil && os.Geteuid() == 0 {
		if err := os.MkdirAll("/run/sshd", 0o755); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	host := filepath.Join(dir, "host_ed25519")
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", host).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v %s", err, out)
	}
	s := &sshServer{authorizedKeys: filepath.Join(dir, "authorized_keys")}
	if err := os.WriteFile(s.authorizedKeys, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for attempt := 0; ; attempt++ {
		addr := freeAddr(t)
		fmt.Sscanf(addr[strings.LastIndexByte(addr, ':')+1:], "%d", &s.port)
		config := filepath.Join(dir, "sshd_config")
		text := fmt.Sprintf("Port %d\nListenAddress 127.0.0.1\nHostKey %s\nPidFile none\nAuthorizedKeysFile %s\n"+
			"StrictModes no\nPasswordAuthentication no\nKbdInteractiveAuthentication no\nPubkeyAuthentication yes\n"+
			"UsePAM no\nPermitRootLogin prohibit-password\nLogLevel VERBOSE\n", s.port, host, s.authorizedKeys)
		if err := os.WriteFile(config, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		s.proc = startProc(t, "sshd", exec.Command(sshdPath, "-D", "-e", "-f", config))
		if attempt < 2 && !s.ready() {
			continue // the port was taken between its choice and the bind
		}
		s.waitLog(`Server listening on 127\.0\.0\.1`, 10*time.Second)
		return s
	}
}

// ready waits for sshd to listen or exit.
func (s *sshServer) ready() bool {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if strings.Contains(s.log.String(), "Server listening on") {
			return true
		}
		select {
		case <-s.done:
			return false
		case <-time.After(20 * time.Millisecond):
		}
	}
	return false
}

func (s *sshServer) authorize(t *testing.T, publicKey string) {
	t.Helper()
	if err := os.WriteFile(s.authorizedKeys, []byte(publicKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
}

// admin runs `gradient-server admin args…` against the server and returns its stdout.
func admin(t *testing.T, addr, key string, args ...string) string {
	t.Helper()
	cmd := serverCmd(append([]string{"admin"}, args...)...)
	cmd.Env = append(cmd.Env, "GRADIENT_SERVER=http://"+addr, "GRADIENT_API_KEY="+key)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("admin %s: %v\n%s", strings.Join(args, " "), err, stderrOf(err))
	}
	return string(out)
}

// A private repository served only over SSH by a real sshd: the project's generated deploy
// key, once on the repository's authorized keys, lets an evaluation fetch it and complete;
// a project of the same repository without a key fails at once, saying so; and the worker
// keeps no key after the jobs (gradient-server §13).
func TestPrivateRepositoryOverSSH(t *testing.T) {
	sshd := startSSHD(t)
	flake := nixexectest.NewFlake(t)
	me, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	repoURL := fmt.Sprintf("ssh://%s@127.0.0.1:%d%s", me.Username, sshd.port, flake.Dir)
	dataDir, addr := t.TempDir(), freeAddr(t)
	key, c := bootstrapKey(t, addr, dataDir)
	srv := startServer(t, addr, dataDir)
	f := &fleet{t: t, srv: srv, api: c, flake: flake, key: key, workerID: newWorkerID(t), baseDir: t.TempDir()}
	private := privateProject(t, c, "private", repoURL)
	nokey := privateProject(t, c, "nokey", repoURL)

	out := admin(t, addr, key, "project", "ssh-key", "generate", "private")
	shown := strings.TrimSpace(admin(t, addr, key, "project", "ssh-key", "show", "private"))
	if !strings.HasPrefix(shown, "ssh-ed25519 ") || !strings.Contains(out, shown) {
		t.Fatalf("ssh-key show printed %q; generate printed:\n%s", shown, out)
	}
	sshd.authorize(t, shown)

	var peers []string
	for _, p := range []api.Project{private, nokey} {
		reg, err := c.RegisterWorker(bg, apiclient.Peer{Kind: apiclient.ProjectPeer, Ref: p.ID}, api.RegisterWorkerRequest{WorkerID: f.workerID})
		if err != nil {
			t.Fatal(err)
		}
		peers = append(peers, reg.PeersFileLine)
	}
	w := startWorker(t, srv, f.workerID, f.baseDir, strings.Join(peers, "\n"))

	ev := startEval(t, c, private, flake)
	f.completed(t, ev, 2*time.Minute, w, sshd.proc, srv.proc)
	sshd.waitLog(`Accepted publickey for `+me.Username, time.Second)

	failed := f.settled(t, startEval(t, c, nokey, flake), time.Minute)
	text := summary(failed)
	if failed.Evaluation.Status != "Failed" || !strings.Contains(text, "Permission denied (publickey") ||
		!strings.Contains(text, "no deploy key") || strings.Contains(text, "after 3 attempts") {
		t.Fatalf("the project without a key: %s", text)
	}
	checkNoKeyLeft(t, f.baseDir)
	f.serverResolvesBranchesWithTheKey(t, private, nokey, w)
	secretKey := privateKeyBody(t, private.ID, dataDir)
	for _, p := range []*proc{w, srv.proc} {
		if strings.Contains(p.log.String(), secretKey) {
			t.Errorf("%s logged the deploy key", p.name)
		}
	}
}

// serverResolvesBranchesWithTheKey: the server's own git (branch resolution, and polls)
// reaches the private repository with the project's deploy key, and fails fast without one.
// The evaluation the branch starts runs to its end, so the worker is idle when the test ends.
func (f *fleet) serverResolvesBranchesWithTheKey(t *testing.T, private, nokey api.Project, w *proc) {
	t.Helper()
	out, err := exec.Command("git", "-C", f.flake.Dir, "symbolic-ref", "--short", "HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}
	branch := strings.TrimSpace(string(out))
	ev, err := f.api.StartEvaluation(bg, private.ID, api.StartEvaluationRequest{Branch: branch})
	if err != nil || ev.Commit != f.flake.Commit {
		t.Fatalf("starting private's %s: %+v, %v", branch, ev, err)
	}
	f.completed(t, ev.ID, 2*time.Minute, w)
	_, err = f.api.StartEvaluation(bg, nokey.ID, api.StartEvaluationRequest{Branch: branch})
	if err == nil || !strings.Contains(err.Error(), "Permission denied") {
		t.Fatalf("starting nokey's %s: %v", branch, err)
	}
}

func privateProject(t *testing.T, c *apiclient.Client, name, url string) api.Project {
	t.Helper()
	p, err := c.CreateProject(bg, api.CreateProjectRequest{Name: name, RepoURL: url,
		Wildcards: []string{"packages.*.*"}})
	if err != nil {
		t.Fatal(err)
	}
	cache, err := c.CreateCache(bg, api.CreateCacheRequest{Name: name + "-cache"})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Subscribe(bg, p.ID, cache.ID); err != nil {
		t.Fatal(err)
	}
	return p
}

func startEval(t *testing.T, c *apiclient.Client, p api.Project, flake nixexectest.Flake) string {
	t.Helper()
	ev, err := c.StartEvaluation(bg, p.ID, api.StartEvaluationRequest{Commit: flake.Commit})
	if err != nil {
		t.Fatal(err)
	}
	return ev.ID
}

// checkNoKeyLeft: every job's private credential directory is gone with its job.
func checkNoKeyLeft(t *testing.T, baseDir string) {
	t.Helper()
	filepath.WalkDir(baseDir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), ".repocred-") {
			t.Errorf("a credential directory outlived its job: %s", path)
		}
		return nil
	})
}

// privateKeyBody is a line from the middle of the deploy key, to look for in logs, read the
// way only the server can: the sealed column opened with the data directory's secret key.
func privateKeyBody(t *testing.T, projectID, dataDir string) string {
	t.Helper()
	st, err := admincli.OpenStore(bg, dataDir, "")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	sealed, err := st.ProjectCredentials(bg, projectID)
	if err != nil {
		t.Fatal(err)
	}
	box, err := aeadbox.LoadOrCreate(dataDir)
	if err != nil {
		t.Fatal(err)
	}
	key, err := box.Open(repocred.PurposeSSHKey, sealed.SSHKeyEnc)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(key)), "\n")
	if len(lines) < 3 {
		t.Fatalf("the stored key has %d lines", len(lines))
	}
	return lines[len(lines)/2]
}
