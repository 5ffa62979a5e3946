package wire

import (
	"bytes"
	"errors"
	"testing"
)

// Test-only types carrying annotations production does not use yet, to prove the
// gradient-protocol §2.3 range computation and the version-dependent codec on something
// other than 30..=30.
type (
	testClient interface{ isTestMsg() }
	testServer interface{ isTestMsg() }

	tPlain     struct{ Name string }
	tEmpty     struct{}
	tDefault28 struct {
		Name  string
		Extra Option[string] `proto:"since=28,default"`
	}
	tRequired29 struct {
		Name string
		Must string `proto:"since=29"`
	}
	tRequired25 struct {
		X uint32 `proto:"since=25"`
	}
	tNewer32 struct {
		System string `proto:"since=32"`
	}
	// A default field whose type is newer than the field still raises OLDEST.
	tHoldsNewer struct {
		Pinned Option[tNewer32] `proto:"since=28,default"`
	}
	// A default field whose type is older than the field does not.
	tHoldsOlder struct {
		Inner Option[tRequired25] `proto:"since=28,default"`
	}
	tNested  struct{ Kind testKind }
	testKind uint8
)

func (*tPlain) isTestMsg()      {}
func (*tEmpty) isTestMsg()      {}
func (*tDefault28) isTestMsg()  {}
func (*tRequired29) isTestMsg() {}
func (*tHoldsNewer) isTestMsg() {}
func (*tHoldsOlder) isTestMsg() {}
func (*tNested) isTestMsg()     {}

var testKindEnum = unitEnum[testKind]("testKind", unit("A", 0), unit("B", 34))

func testProtocol(client, server []variantDef, clientOldest uint16) *protocol {
	return buildProtocol(
		dataEnum[testClient]("C", client...).withOldest(clientOldest),
		dataEnum[testServer]("S", server...),
		testKindEnum)
}

func TestProtoVersionsComputedFromAnnotations(t *testing.T) {
	empty := []variantDef{variant[tEmpty](0)}
	tests := []struct {
		name           string
		client, server []variantDef
		clientOldest   uint16
		want           VersionRange
	}{
		{"no annotations", []variantDef{variant[tPlain](0)}, empty, 0, VersionRange{0, 0}},
		{"default field raises NEWEST only", []variantDef{variant[tDefault28](0)}, empty, 0, VersionRange{0, 28}},
		{"required field raises OLDEST", []variantDef{variant[tRequired29](0)}, empty, 0, VersionRange{29, 29}},
		{"new variant raises NEWEST", []variantDef{variant[tPlain](0), variant[tEmpty](31)}, empty, 0, VersionRange{0, 31}},
		{"oldest annotation", []variantDef{variant[tPlain](0)}, empty, 27, VersionRange{27, 27}},
		{"oldest on one side, newer variant on the other", []variantDef{variant[tPlain](0)},
			[]variantDef{variant[tEmpty](0), variant[tPlain](31)}, 27, VersionRange{27, 31}},
		{"default field of a newer type raises OLDEST", []variantDef{variant[tHoldsNewer](0)}, empty, 0, VersionRange{32, 32}},
		{"default field of an older type does not", []variantDef{variant[tHoldsOlder](0)}, empty, 0, VersionRange{0, 28}},
		{"variant whose payload is newer raises OLDEST", []variantDef{variant[tRequired29](28)}, empty, 0, VersionRange{29, 29}},
		{"variant whose payload is older does not", []variantDef{variant[tRequired29](30)}, empty, 0, VersionRange{0, 30}},
		{"nested unit variant raises NEWEST", []variantDef{variant[tNested](0)}, empty, 0, VersionRange{0, 34}},
		{"client oldest 30, server newest 33", []variantDef{variant[tPlain](0)},
			[]variantDef{variant[tEmpty](0), variant[tPlain](33)}, 30, VersionRange{30, 33}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := testProtocol(tc.client, tc.server, tc.clientOldest).versions; got != tc.want {
				t.Errorf("versions = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestCodecFollowsAnnotations(t *testing.T) {
	p := testProtocol([]variantDef{variant[tDefault28](0), variant[tNested](0), variant[tEmpty](31)},
		[]variantDef{variant[tEmpty](0)}, 0)
	msg := &tDefault28{Name: "n", Extra: Some("x")}

	at27, err := appendValue(nil, p.client, msg, 27)
	if err != nil || !bytes.Equal(at27, []byte{0, 1, 'n'}) {
		t.Fatalf("v27 encoding = % x, %v; want 00 01 6e (default field left out)", at27, err)
	}
	at28, err := appendValue(nil, p.client, msg, 28)
	if err != nil || !bytes.Equal(at28, []byte{0, 1, 'n', 1, 1, 'x'}) {
		t.Fatalf("v28 encoding = % x, %v; want the default field present", at28, err)
	}
	back, err := decodeValue(at27, p.client, 27)
	if err != nil || back.(*tDefault28).Extra.Valid {
		t.Errorf("v27 decode = %+v, %v; want Extra zero", back, err)
	}

	_, err = appendValue(nil, p.client, &tEmpty{}, 30)
	var ee *EncodeError
	if !errors.As(err, &ee) || ee.Error() != "tEmpty exists since protocol 31, the peer speaks 30" {
		t.Errorf("encoding a v31 variant at v30: %v", err)
	}
	_, err = decodeValue([]byte{2}, p.client, 30)
	if !errors.Is(err, UnknownVariantError{Type: "C", Tag: 2, Version: 30}) {
		t.Errorf("decoding a v31 variant at v30: %v", err)
	}
	if _, err := decodeValue([]byte{2}, p.client, 31); err != nil {
		t.Errorf("decoding a v31 variant at v31: %v", err)
	}

	_, err = appendValue(nil, p.client, &tNested{Kind: 1}, 33)
	if !errors.As(err, &ee) || ee.Since != 34 || ee.Version != 33 || ee.Type != "B" {
		t.Errorf("encoding a v34 unit variant at v33: %v", err)
	}
	_, err = decodeValue([]byte{1, 1}, p.client, 33)
	if !errors.Is(err, UnknownVariantError{Type: "testKind", Tag: 1, Version: 33}) {
		t.Errorf("decoding a v34 unit variant at v33: %v", err)
	}
}

func TestDescribeFollowsAnnotations(t *testing.T) {
	p := testProtocol([]variantDef{variant[tDefault28](0), variant[tNested](0), variant[tEmpty](31)},
		[]variantDef{variant[tEmpty](0)}, 0)
	tests := map[uint16]string{
		27: "client\n0:{str}\n1:{[0:{}]}\nserver\n0:{}\n",
		28: "client\n0:{str,opt<str>}\n1:{[0:{}]}\nserver\n0:{}\n",
		31: "client\n0:{str,opt<str>}\n1:{[0:{}]}\n2:{}\nserver\n0:{}\n",
		34: "client\n0:{str,opt<str>}\n1:{[0:{},1:{}]}\n2:{}\nserver\n0:{}\n",
	}
	for v, want := range tests {
		if got := p.describe(v); got != want {
			t.Errorf("describe(%d) = %q, want %q", v, got, want)
		}
	}
}

func TestVariantsAreAppendOnly(t *testing.T) {
	for _, d := range append([]*enumDef{clientMessageEnum, serverMessageEnum}, sharedEnums()...) {
		for i := 1; i < len(d.variants); i++ {
			if d.variants[i].since < d.variants[i-1].since {
				t.Errorf("%s: variant %d (%s) since %d follows since %d", d.name, i, d.variants[i].name,
					d.variants[i].since, d.variants[i-1].since)
			}
		}
	}
	bad := &enumDef{name: "Bad", variants: []variantDef{unit("New", 31), unit("Old", 30)}}
	if err := bad.appendOnly(); err == nil {
		t.Error("appendOnly accepted a variant older than the one before it")
	}
	defer func() {
		if recover() == nil {
			t.Error("unitEnum accepted a variant older than the one before it")
		}
	}()
	unitEnum[testKind]("Bad", unit("New", 31), unit("Old", 30))
}

func TestParseTag(t *testing.T) {
	tests := []struct {
		tag      string
		since    uint16
		optional bool
		bad      bool
	}{
		{tag: ""},
		{tag: "since=28", since: 28},
		{tag: "since=28,default", since: 28, optional: true},
		{tag: "default", bad: true},
		{tag: "since=70000", bad: true},
		{tag: "since=x", bad: true},
		{tag: "sine=3", bad: true},
	}
	for _, tc := range tests {
		since, optional, err := parseTag(tc.tag)
		if (err != nil) != tc.bad || since != tc.since || optional != tc.optional {
			t.Errorf("parseTag(%q) = %d, %v, %v", tc.tag, since, optional, err)
		}
	}
}
