package identity

import (
	"bytes"
	"errors"
	"testing"
)

func TestPrintIdentity(t *testing.T) {
	id := &Identity{NodeID: "n1", Key: testKey(t, 3)}
	key := id.Key.PublicText()
	cases := []struct {
		addr, want string
	}{
		{"10.0.0.1:6680", "node-id n1\npublic-key " + key + "\ncluster-admit n1=10.0.0.1:6680@" + key + "\n"},
		{"build-1.example:6680", "node-id n1\npublic-key " + key + "\ncluster-admit n1=build-1.example:6680@" + key + "\n"},
		{"[fd00::7]:6680", "node-id n1\npublic-key " + key + "\ncluster-admit n1=[fd00::7]:6680@" + key + "\n"},
		{"", "node-id n1\npublic-key " + key + "\n"},
		{"127.0.0.1:6680", "node-id n1\npublic-key " + key + "\n"},
		{"0.0.0.0:6680", "node-id n1\npublic-key " + key + "\n"},
		{":6680", "node-id n1\npublic-key " + key + "\n"},
	}
	for _, c := range cases {
		var out bytes.Buffer
		if err := PrintIdentity(&out, id, c.addr); err != nil {
			t.Fatal(err)
		}
		if out.String() != c.want {
			t.Errorf("address %q:\n got %q\nwant %q", c.addr, out.String(), c.want)
		}
	}
}

func TestCheckDialable(t *testing.T) {
	cases := map[string]error{
		"10.0.0.1:6674":           nil,
		"build-1.example:6674":    nil,
		"[2001:db8::1]:6674":      nil,
		"":                        ErrAddressForm,
		"10.0.0.1":                ErrAddressForm,
		"10.0.0.1:0":              ErrAddressForm,
		"10.0.0.1:65536":          ErrAddressForm,
		"10.0.0.1:+80":            ErrAddressForm,
		"10.0.0.1:080":            ErrAddressForm,
		"host name:80":            ErrAddressForm,
		":6674":                   ErrAddressWildcard,
		"*:6674":                  ErrAddressWildcard,
		"0.0.0.0:6674":            ErrAddressWildcard,
		"[::]:6674":               ErrAddressWildcard,
		"127.0.0.1:6674":          ErrAddressLoopback,
		"127.8.9.10:6674":         ErrAddressLoopback,
		"[::1]:6674":              ErrAddressLoopback,
		"[::ffff:127.0.0.1]:6674": ErrAddressLoopback,
		"localhost:6674":          ErrAddressLoopback,
		"LocalHost.:6674":         ErrAddressLoopback,
		"a.localhost:6674":        ErrAddressLoopback,
	}
	for addr, want := range cases {
		err := CheckDialable(addr)
		if (want == nil) != (err == nil) || (want != nil && !errors.Is(err, want)) {
			t.Errorf("%q: got %v, want %v", addr, err, want)
		}
	}
}
