package repocred

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Timeouts that keep a fetch from hanging on an unreachable or silent repository.
const (
	connectTimeoutSecs = 15
	// an ssh connection whose server answers no keep-alive for 3 × 15 s is dead.
	aliveIntervalSecs = 15
	// an https transfer slower than 1 byte/s for 60 s is dead.
	lowSpeedTimeSecs = 60
)

// Prepare writes c into a fresh private directory under parent (os.TempDir() when "") and
// returns the environment git needs to fetch repoURL with it, plus a cleanup that removes the
// directory and everything in it; call it whatever the fetch's outcome. Without a
// credential (Kind None) the environment still makes git fail fast instead of prompting or
// hanging, and uses no identity of the user running it: a project without a key must not
// fetch with the machine's own. The secret is written only into the directory (0700, files
// 0600); the environment names the files, never the secret.
func Prepare(parent, repoURL string, c Credential) (env []string, cleanup func(), err error) {
	if c.Kind != None && c.Kind != ForURL(repoURL) {
		return nil, nil, fmt.Errorf("%w: a %s for %s", ErrInvalid, c.Kind, redact(repoURL))
	}
	dir, err := os.MkdirTemp(parent, ".repocred-")
	if err != nil {
		return nil, nil, fmt.Errorf("repocred: private directory: %w", err)
	}
	cleanup = func() { _ = os.RemoveAll(dir) }
	if err := os.Chmod(dir, 0o700); err != nil {
		cleanup()
		return nil, nil, fmt.Errorf("repocred: private directory: %w", err)
	}
	env = []string{"GIT_TERMINAL_PROMPT=0", "GIT_ASKPASS=", "SSH_ASKPASS="}
	sshEnv, err := sshCommand(dir, c)
	if err == nil {
		env = append(env, sshEnv)
		var cfg []string
		cfg, err = gitConfig(dir, c)
		env = append(env, cfg...)
	}
	if err != nil {
		cleanup()
		return nil, nil, err
	}
	return env, cleanup, nil
}

// sshCommand is GIT_SSH_COMMAND: errors only (no known-hosts chatter in a job's error),
// batch mode (no prompt), a connect timeout and keep-alives,
// the host key learnt on first use into a known_hosts of this directory only, no agent, and
// only the given key (or none at all).
func sshCommand(dir string, c Credential) (string, error) {
	opts := []string{"ssh", "-o", "LogLevel=ERROR", "-o", "BatchMode=yes", "-o", "ConnectTimeout=" + strconv.Itoa(connectTimeoutSecs),
		"-o", "ServerAliveInterval=" + strconv.Itoa(aliveIntervalSecs), "-o", "ServerAliveCountMax=3",
		"-o", "StrictHostKeyChecking=accept-new", "-o", "UserKnownHostsFile=" + quote(filepath.Join(dir, "known_hosts")),
		"-o", "IdentityAgent=none", "-o", "IdentitiesOnly=yes"}
	if c.Kind != SSHKey {
		return "GIT_SSH_COMMAND=" + strings.Join(append(opts, "-o", "IdentityFile=none"), " "), nil
	}
	key := filepath.Join(dir, "id")
	if err := writePrivate(key, withNewline(c.Secret)); err != nil {
		return "", err
	}
	return "GIT_SSH_COMMAND=" + strings.Join(append(opts, "-i", quote(key)), " "), nil
}

// gitConfig is configuration through GIT_CONFIG_COUNT: every credential helper configured
// elsewhere dropped (one could store the token on disk), this directory's answer as the
// only one, and a low-speed limit so a stalled https transfer ends.
func gitConfig(dir string, c Credential) ([]string, error) {
	pairs := [][2]string{{"credential.helper", ""},
		{"http.lowSpeedLimit", "1"}, {"http.lowSpeedTime", strconv.Itoa(lowSpeedTimeSecs)}}
	if c.Kind == HTTPSToken {
		answer := filepath.Join(dir, "credential")
		data := c.WireData()
		defer clear(data)
		user, token, _ := strings.Cut(string(data), "\n")
		if err := writePrivate(answer, []byte("username="+user+"\npassword="+token+"\n")); err != nil {
			return nil, err
		}
		// git runs a helper that starts with "!" through the shell, with the action
		// (get, store, erase) as its argument; only get is answered.
		pairs = append(pairs, [2]string{"credential.helper", `!f() { test "$1" = get && cat ` + quote(answer) + `; }; f`})
	}
	env := []string{"GIT_CONFIG_COUNT=" + strconv.Itoa(len(pairs))}
	for i, p := range pairs {
		env = append(env, fmt.Sprintf("GIT_CONFIG_KEY_%d=%s", i, p[0]), fmt.Sprintf("GIT_CONFIG_VALUE_%d=%s", i, p[1]))
	}
	return env, nil
}

// writePrivate creates path 0600 (refusing one that exists) and writes data.
func writePrivate(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("repocred: %w", err)
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("repocred: writing %s: %w", filepath.Base(path), err)
	}
	return nil
}

// withNewline: ssh refuses a PEM key file without its final newline.
func withNewline(b []byte) []byte {
	if len(b) > 0 && b[len(b)-1] != '\n' {
		return append(b[:len(b):len(b)], '\n')
	}
	return b
}

// quote is a path as one shell word (git runs GIT_SSH_COMMAND and "!" helpers through sh).
func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
