package wire

import (
	"regexp"
	"testing"
)

func TestLabelsAreDistinctAndPaceShaped(t *testing.T) {
	shape := regexp.MustCompile(`^pace-[a-z]+(-[a-z]+)*-v1$`)
	seen := map[string]bool{}
	for _, l := range Labels() {
		if !shape.MatchString(l) || seen[l] {
			t.Errorf("label %q is duplicated or not pace-<construction>-v1", l)
		}
		seen[l] = true
	}
	if len(seen) != 11 {
		t.Errorf("%d labels, want the 11 constructions of pace-wire §1.15", len(seen))
	}
}

func TestLabelledMessageSeparatesConstructions(t *testing.T) {
	a := AppendLabelledMessage(nil, LabelLease, []byte("claims"))
	b := AppendLabelledMessage(nil, LabelTicket, []byte("claims"))
	if string(a) == string(b) {
		t.Fatal("two constructions signed the same bytes")
	}
	f, err := SplitFields(nil, a, 2)
	if err != nil || string(f[0]) != LabelLease || string(f[1]) != "claims" {
		t.Fatalf("labelled message is not [label][fields...]: %q %v", f, err)
	}
}
