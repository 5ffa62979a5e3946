package admincli

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/buildfleet/buildfleet/internal/gradient/api"
)

// repoCredCommands are the private-repository verbs (gradient-server §13.1).
func repoCredCommands() []command {
	return []command{sshKeyGenerate(), sshKeySet(), sshKeyShow(), sshKeyRemove(), httpsTokenSet(), httpsTokenRemove()}
}

// maxCredentialFile bounds a key or token file read for the server.
const maxCredentialFile = 64 << 10

func sshKeyGenerate() command {
	return command{path: "project ssh-key generate", args: []string{"PROJECT"}, setup: func(*flag.FlagSet) func(*invocation) error {
		return func(in *invocation) error {
			k, err := in.client.GenerateSSHKey(in.ctx, in.args[0])
			if err != nil {
				return err
			}
			return in.emit(k, deployKeyText(k, "Generated"))
		}
	}}
}

func sshKeySet() command {
	return command{path: "project ssh-key set", args: []string{"PROJECT"}, setup: func(fs *flag.FlagSet) func(*invocation) error {
		file := fs.String("key-file", "", "the private key file (OpenSSH or PEM, without a passphrase)")
		return func(in *invocation) error {
			key, err := readCredentialFile(*file, "--key-file")
			if err != nil {
				return err
			}
			defer clear(key)
			k, err := in.client.SetSSHKey(in.ctx, in.args[0], key)
			if err != nil {
				return err
			}
			return in.emit(k, deployKeyText(k, "Set"))
		}
	}}
}

func deployKeyText(k api.SSHKey, verb string) func(io.Writer) {
	return func(w io.Writer) {
		fmt.Fprintf(w, "%s the deploy key of project %s (%s). Add this public key to the repository's deploy keys (read access is enough):\n%s\n",
			verb, k.Project, k.Fingerprint, k.PublicKey)
	}
}

// sshKeyShow prints the public key alone, in authorized_keys form, so it can be piped.
func sshKeyShow() command {
	return command{path: "project ssh-key show", args: []string{"PROJECT"}, setup: func(*flag.FlagSet) func(*invocation) error {
		return func(in *invocation) error {
			k, err := in.client.SSHKey(in.ctx, in.args[0])
			if err != nil {
				return err
			}
			return in.emit(k, func(w io.Writer) { fmt.Fprintln(w, k.PublicKey) })
		}
	}}
}

func sshKeyRemove() command {
	return command{path: "project ssh-key remove", args: []string{"PROJECT"}, setup: func(*flag.FlagSet) func(*invocation) error {
		return func(in *invocation) error {
			if err := in.client.RemoveSSHKey(in.ctx, in.args[0]); err != nil {
				return err
			}
			return in.emit(map[string]any{"project": in.args[0], "ssh_key": false},
				func(w io.Writer) { fmt.Fprintf(w, "Removed the deploy key of project %s.\n", in.args[0]) })
		}
	}}
}

func httpsTokenSet() command {
	return command{path: "project https-token set", args: []string{"PROJECT"}, setup: func(fs *flag.FlagSet) func(*invocation) error {
		file := fs.String("token-file", "", "a file holding the token (surrounding whitespace is ignored)")
		user := fs.String("username", "", "the username sent with the token (default x-access-token; GitLab OAuth tokens want oauth2)")
		return func(in *invocation) error {
			data, err := readCredentialFile(*file, "--token-file")
			if err != nil {
				return err
			}
			defer clear(data)
			t, err := in.client.SetHTTPSToken(in.ctx, in.args[0], *user, bytes.TrimSpace(data))
			if err != nil {
				return err
			}
			return in.emit(t, func(w io.Writer) {
				fmt.Fprintf(w, "Set the https token of project %s (username %s).\n", t.Project, t.Username)
			})
		}
	}}
}

func httpsTokenRemove() command {
	return command{path: "project https-token remove", args: []string{"PROJECT"}, setup: func(*flag.FlagSet) func(*invocation) error {
		return func(in *invocation) error {
			if err := in.client.RemoveHTTPSToken(in.ctx, in.args[0]); err != nil {
				return err
			}
			return in.emit(map[string]any{"project": in.args[0], "https_token": false},
				func(w io.Writer) { fmt.Fprintf(w, "Removed the https token of project %s.\n", in.args[0]) })
		}
	}}
}

// readCredentialFile reads a secret from a file rather than the command line, where other
// processes could read it.
func readCredentialFile(path, flagName string) ([]byte, error) {
	if path == "" {
		return nil, usagef("%s is required", flagName)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", flagName, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxCredentialFile+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", flagName, err)
	}
	if len(data) > maxCredentialFile {
		return nil, fmt.Errorf("%s: %s is over %d bytes", flagName, path, maxCredentialFile)
	}
	return data, nil
}
