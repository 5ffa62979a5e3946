package repocred

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// prepared runs Prepare and checks what every credential directory must be: private, the
// secret absent from the environment, and gone after cleanup.
func prepared(t *testing.T, url string, c Credential) []string {
	t.Helper()
	parent := t.TempDir()
	env, cleanup, err := Prepare(parent, url, c)
	if err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(parent)
	if len(entries) != 1 {
		t.Fatalf("Prepare made %d entries under its parent, want 1", len(entries))
	}
	dir := filepath.Join(parent, entries[0].Name())
	checkMode(t, dir, 0o700)
	files, _ := os.ReadDir(dir)
	for _, f := range files {
		checkMode(t, filepath.Join(dir, f.Name()), 0o600)
	}
	if len(c.Secret) > 0 && strings.Contains(strings.Join(env, "\n"), string(c.Secret)) {
		t.Fatal("the secret is in the environment")
	}
	t.Cleanup(func() {
		cleanup()
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("cleanup left %s: %v", dir, err)
		}
	})
	return env
}

func checkMode(t *testing.T, path string, want os.FileMode) {
	t.Helper()
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := info.Mode().Perm(); got != want {
		t.Errorf("%s has mode %v, want %v", filepath.Base(path), got, want)
	}
}

func envValue(env []string, name string) string {
	v := ""
	for _, e := range env {
		if k, val, _ := strings.Cut(e, "="); k == name {
			v = val
		}
	}
	return v
}

func TestPrepareSSHKeyUsesOnlyTheKey(t *testing.T) {
	key, err := Generate(nil, "t")
	if err != nil {
		t.Fatal(err)
	}
	env := prepared(t, "git@forge:o/r.git", Credential{Kind: SSHKey, Secret: key})
	cmd := envValue(env, "GIT_SSH_COMMAND")
	for _, want := range []string{"BatchMode=yes", "ConnectTimeout=", "StrictHostKeyChecking=accept-new",
		"UserKnownHostsFile=", "IdentitiesOnly=yes", "IdentityAgent=none", "-i '"} {
		if !strings.Contains(cmd, want) {
			t.Errorf("GIT_SSH_COMMAND %q lacks %q", cmd, want)
		}
	}
	keyFile := cmd[strings.Index(cmd, "-i '")+4 : len(cmd)-1]
	if got, err := os.ReadFile(keyFile); err != nil || string(got) != string(key) {
		t.Errorf("key file %s: %v", keyFile, err)
	}
}

func TestPrepareWithoutCredentialLoadsNoIdentity(t *testing.T) {
	env := prepared(t, "ssh://forge/r", Credential{})
	cmd := envValue(env, "GIT_SSH_COMMAND")
	if !strings.Contains(cmd, "IdentityFile=none") || strings.Contains(cmd, " -i ") {
		t.Errorf("GIT_SSH_COMMAND %q may use the machine's own keys", cmd)
	}
	if envValue(env, "GIT_TERMINAL_PROMPT") != "0" {
		t.Error("git may prompt")
	}
}

// git itself, asked for the credential of the URL the way a fetch asks, gets the token
// from the private directory and from no other helper.
func TestPrepareHTTPSTokenAnswersGit(t *testing.T) {
	c := Credential{Kind: HTTPSToken, Username: "oauth2", Secret: []byte("glpat-s3cret")}
	env := prepared(t, "https://forge.example/o/r.git", c)
	home := t.TempDir()
	// A helper configured globally must not be asked (nor told the token).
	if err := os.WriteFile(filepath.Join(home, ".gitconfig"), []byte("[credential]\n\thelper = store\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	fill := exec.Command("git", "credential", "fill")
	fill.Env = append(append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+home), env...)
	fill.Stdin = strings.NewReader("protocol=https\nhost=forge.example\npath=o/r.git\n\n")
	out, err := fill.CombinedOutput()
	if err != nil {
		t.Fatalf("git credential fill: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "username=oauth2\n") || !strings.Contains(string(out), "password=glpat-s3cret\n") {
		t.Fatalf("git credential fill answered %q", out)
	}
	approve := exec.Command("git", "credential", "approve")
	approve.Env, approve.Stdin = fill.Env, strings.NewReader(string(out)+"\n")
	if out, err := approve.CombinedOutput(); err != nil {
		t.Fatalf("git credential approve: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(home, ".git-credentials")); !os.IsNotExist(err) {
		t.Fatalf("the token reached the user's credential store: %v", err)
	}
}

func TestPrepareRefusesAMismatchedCredential(t *testing.T) {
	if _, _, err := Prepare(t.TempDir(), "https://h/r", Credential{Kind: SSHKey, Secret: []byte("k")}); err == nil {
		t.Fatal("Prepare accepted an ssh key for an https URL")
	}
}
