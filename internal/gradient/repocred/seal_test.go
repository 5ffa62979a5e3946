package repocred

import (
	"bytes"
	"testing"

	"github.com/buildfleet/buildfleet/internal/gradient/aeadbox"
)

// The URL picks which sealed credential opens; each is bound to its purpose.
func TestOpenPicksByURL(t *testing.T) {
	box, err := aeadbox.New(bytes.Repeat([]byte{7}, 32))
	if err != nil {
		t.Fatal(err)
	}
	key := []byte("-----BEGIN OPENSSH PRIVATE KEY-----\n")
	sealedKey, _ := box.Seal(PurposeSSHKey, key)
	sealedToken, err := SealToken(box, "", []byte("ghp_x"))
	if err != nil {
		t.Fatal(err)
	}
	both := Sealed{SSHKeyEnc: sealedKey, HTTPSTokenEnc: sealedToken}
	if c, err := Open(box, "git@h:r", both); err != nil || c.Kind != SSHKey || !bytes.Equal(c.Secret, key) {
		t.Errorf("ssh URL: %+v %v", c, err)
	}
	if c, err := Open(box, "https://h/r", both); err != nil || c.Kind != HTTPSToken || string(c.Secret) != "ghp_x" || c.Username != DefaultUsername {
		t.Errorf("https URL: %+v %v", c, err)
	}
	if c, err := Open(box, "file:///r", both); err != nil || c.Kind != None {
		t.Errorf("file URL: %+v %v", c, err)
	}
	if c, err := Open(box, "https://h/r", Sealed{SSHKeyEnc: sealedKey}); err != nil || c.Kind != None {
		t.Errorf("https URL with only a key: %+v %v", c, err)
	}
	if _, err := Open(box, "https://h/r", Sealed{HTTPSTokenEnc: sealedKey}); err == nil {
		t.Error("a key sealed as a key opened as a token")
	}
	if _, err := SealToken(box, "", []byte("two words")); err == nil {
		t.Error("SealToken accepted a token with a space")
	}
}
