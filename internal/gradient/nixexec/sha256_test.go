package nixexec

import (
	"bytes"
	"encoding/hex"
	"errors"
	"testing"
)

func mustHex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestParseSHA256AcceptsEveryForm(t *testing.T) {
	want := mustHex(t, "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03")
	forms := []string{
		"sha256-WJG1tSLV3whtD/CxEPvZ0hu0/HFjrzTQgoai6Eb2vgM=",
		"sha256:00xyyr3fi8l6hb839bv3f7yb86yjv7xi1cgh1xnhipym4asvb4aq",
		"00xyyr3fi8l6hb839bv3f7yb86yjv7xi1cgh1xnhipym4asvb4aq",
		"sha256:5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03",
		"5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03",
	}
	for _, f := range forms {
		got, err := ParseSHA256(f)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("ParseSHA256(%q) = %x, %v", f, got, err)
		}
	}
	if got := SHA256Text(want); got != forms[1] {
		t.Errorf("SHA256Text = %q, want %q", got, forms[1])
	}
	for _, bad := range []string{"", "sha256-", "sha256:zz", "md5-AAAA", "sha256:" + "e" + forms[2][1:], "sha256-AAAA"} {
		if _, err := ParseSHA256(bad); !errors.Is(err, ErrBadHash) {
			t.Errorf("ParseSHA256(%q) err = %v, want ErrBadHash", bad, err)
		}
	}
}

func FuzzParseSHA256(f *testing.F) {
	f.Add("sha256-WJG1tSLV3whtD/CxEPvZ0hu0/HFjrzTQgoai6Eb2vgM=")
	f.Add("sha256:00xyyr3fi8l6hb839bv3f7yb86yjv7xi1cgh1xnhipym4asvb4aq")
	f.Fuzz(func(t *testing.T, s string) {
		sum, err := ParseSHA256(s)
		if err != nil {
			return
		}
		if len(sum) != 32 {
			t.Fatalf("%q parsed to %d bytes", s, len(sum))
		}
		again, err := ParseSHA256(SHA256Text(sum))
		if err != nil || !bytes.Equal(again, sum) {
			t.Fatalf("%q: re-parse of %s: %x, %v", s, SHA256Text(sum), again, err)
		}
	})
}
