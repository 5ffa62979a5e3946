package repocred

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestGeneratedKeyIsOpenSSHEd25519(t *testing.T) {
	key, err := Generate(nil, "gradient-demo")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(key), "-----BEGIN OPENSSH PRIVATE KEY-----\n") {
		t.Fatalf("not OpenSSH format: %.40q", key)
	}
	pub, err := AuthorizedKey(key, "gradient demo")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(pub.AuthorizedKey, "ssh-ed25519 AAAA") || !strings.HasSuffix(pub.AuthorizedKey, " gradient-demo") ||
		!strings.HasPrefix(pub.Fingerprint, "SHA256:") {
		t.Fatalf("public key %+v", pub)
	}
	// ssh-keygen derives the same public key from the file: ssh reads what we wrote.
	path := filepath.Join(t.TempDir(), "id")
	if err := os.WriteFile(path, key, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("ssh-keygen", "-y", "-f", path).Output()
	if err != nil {
		t.Fatalf("ssh-keygen -y: %v", err)
	}
	if fields := strings.Fields(string(out)); len(fields) < 2 || !strings.HasPrefix(pub.AuthorizedKey, fields[0]+" "+fields[1]) {
		t.Fatalf("ssh-keygen derived %q, we %q", out, pub.AuthorizedKey)
	}
}

func TestParseKeyOfSSHKeygen(t *testing.T) {
	dir := t.TempDir()
	for _, kt := range []string{"ed25519", "ecdsa", "rsa"} {
		path := filepath.Join(dir, kt)
		if out, err := exec.Command("ssh-keygen", "-q", "-t", kt, "-N", "", "-C", "c", "-f", path).CombinedOutput(); err != nil {
			t.Fatalf("ssh-keygen: %v %s", err, out)
		}
		data, _ := os.ReadFile(path)
		key, err := ParseKey(data, "x")
		if err != nil {
			t.Fatalf("%s: %v", kt, err)
		}
		pub, _ := os.ReadFile(path + ".pub")
		got, err := AuthorizedKey(key, "")
		if err != nil || !strings.HasPrefix(string(pub), got.AuthorizedKey+" ") {
			t.Fatalf("%s: public key %q (%v), ssh-keygen's %q", kt, got.AuthorizedKey, err, pub)
		}
	}
	locked := filepath.Join(dir, "locked")
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "pass phrase", "-f", locked).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v %s", err, out)
	}
	data, _ := os.ReadFile(locked)
	if _, err := ParseKey(data, ""); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "passphrase") {
		t.Fatalf("a key with a passphrase: %v", err)
	}
	if _, err := ParseKey([]byte("ssh-ed25519 AAAA public"), ""); !errors.Is(err, ErrInvalid) {
		t.Fatalf("a public key: %v", err)
	}
}
