package verbs

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

func control(verb, subject []byte) func() error {
	return func() error { _, err := ParseEnrollControl([][]byte{verb, subject}); return err }
}

func TestParseEnrollControlRefusals(t *testing.T) {
	mf, tl := wire.CodeMalformedFrame, true
	approve, key := []byte{EnrollApprove}, fill(32, 1)
	auto := []byte{EnrollAutoApprove}
	cases := []refusalCase{
		{"one field", func() error { _, err := ParseEnrollControl([][]byte{{EnrollList}}); return err }, "fields", mf, false},
		{"three fields", func() error { _, err := ParseEnrollControl([][]byte{{EnrollList}, nil, nil}); return err }, "fields", mf, false},
		{"verb empty", control(nil, nil), "verb", mf, false},
		{"verb two bytes", control([]byte{0, EnrollList}, nil), "verb", mf, false},
		{"list with a subject", control([]byte{EnrollList}, []byte("n1")), "subject", mf, false},
		{"clear with a subject", control([]byte{EnrollClear}, []byte{0}), "subject", mf, false},
		{"auto-approve-off with a subject", control([]byte{EnrollAutoOff}, []byte("60")), "subject", mf, false},
		{"reject without an id", control([]byte{EnrollReject}, nil), "id", mf, false},
		{"reject id 65 bytes", control([]byte{EnrollReject}, text(65)), "id", mf, tl},
		{"reject id not UTF-8", control([]byte{EnrollReject}, notUTF8), "id", mf, false},
		{"approve without a subject", control(approve, nil), "subject", mf, false},
		{"approve with the key only", control(approve, key), "subject", mf, false},
		{"approve with 31 key bytes", control(approve, fill(31, 1)), "subject", mf, false},
		{"approve id 65 bytes", control(approve, append(text(65), key...)), "id", mf, tl},
		{"approve id not UTF-8", control(approve, append(append([]byte(nil), notUTF8...), key...)), "id", mf, false},
		{"auto-approve 0 seconds", control(auto, []byte("0")), "seconds", mf, false},
		{"auto-approve 000000 seconds", control(auto, []byte("000000")), "seconds", mf, false},
		{"auto-approve 86401 seconds", control(auto, []byte("86401")), "seconds", mf, false},
		{"auto-approve 999999 seconds", control(auto, []byte("999999")), "seconds", mf, false},
		{"auto-approve seven digits", control(auto, []byte("0000060")), "seconds", mf, false},
		{"auto-approve empty", control(auto, nil), "seconds", mf, false},
		{"auto-approve 60s", control(auto, []byte("60s")), "seconds", mf, false},
		{"auto-approve -60", control(auto, []byte("-60")), "seconds", mf, false},
		{"auto-approve +60", control(auto, []byte("+60")), "seconds", mf, false},
		{"auto-approve space", control(auto, []byte(" 60")), "seconds", mf, false},
		{"auto-approve binary", control(auto, u32(60)), "seconds", mf, false},
	}
	for _, v := range []byte{0, 1, 2, 4, 10, 0xff} {
		cases = append(cases, refusalCase{fmt.Sprintf("unknown verb %02x", v), control([]byte{v}, nil), "verb", mf, false})
	}
	checkRefusals(t, cases)
}

func TestParseEnrollControlAccepts(t *testing.T) {
	key := fill(32, 1)
	for _, tc := range []struct {
		name          string
		verb, subject []byte
		want          EnrollControl
	}{
		{"list", []byte{EnrollList}, nil, EnrollControl{Verb: EnrollList}},
		{"reject", []byte{EnrollReject}, []byte("n1"), EnrollControl{Verb: EnrollReject, ID: "n1"}},
		{"approve", []byte{EnrollApprove}, append([]byte("n1"), key...), EnrollControl{Verb: EnrollApprove, ID: "n1", Key: key}},
		{"approve, one-byte id", []byte{EnrollApprove}, append([]byte("x"), key...), EnrollControl{Verb: EnrollApprove, ID: "x", Key: key}},
		{"auto-approve 1 s", []byte{EnrollAutoApprove}, []byte("1"), EnrollControl{Verb: EnrollAutoApprove, Seconds: 1}},
		{"auto-approve a day", []byte{EnrollAutoApprove}, []byte("86400"), EnrollControl{Verb: EnrollAutoApprove, Seconds: 86400}},
		{"auto-approve leading zero", []byte{EnrollAutoApprove}, []byte("000600"), EnrollControl{Verb: EnrollAutoApprove, Seconds: 600}},
		{"auto-approve-off", []byte{EnrollAutoOff}, nil, EnrollControl{Verb: EnrollAutoOff}},
		{"clear", []byte{EnrollClear}, nil, EnrollControl{Verb: EnrollClear}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseEnrollControl([][]byte{tc.verb, tc.subject})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got, diffOpts); diff != "" {
				t.Fatalf("(-want +got):\n%s", diff)
			}
		})
	}
}

func genEnrollControl(t *rapid.T) EnrollControl {
	c := EnrollControl{Verb: rapid.SampledFrom([]uint8{EnrollList, EnrollReject, EnrollAutoApprove, EnrollAutoOff,
		EnrollClear, EnrollApprove}).Draw(t, "verb")}
	switch c.Verb {
	case EnrollReject:
		c.ID = genText(1, MaxID).Draw(t, "id")
	case EnrollApprove:
		c.ID = genText(1, MaxID).Draw(t, "id")
		c.Key = rapid.SliceOfN(rapid.Byte(), 32, 32).Draw(t, "key")
	case EnrollAutoApprove:
		c.Seconds = rapid.Uint64Range(1, MaxAutoApproveSeconds).Draw(t, "seconds")
	}
	return c
}

func TestRoundTripEnrollControl(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := genEnrollControl(t)
		got, err := ParseEnrollControl(splitRequest(t, wire.OpEnrollControl, c.Append(nil)))
		checkRoundTrip(t, c, got, err)
	})
}

// goodRow is an enrollment row's thirteen fields, fresh on every call.
func goodRow() [][]byte {
	return [][]byte{[]byte("n1"), []byte("10.0.0.7:6674"), []byte("10.0.0.7"), u64(30), u32(2), {RowPending},
		u32(0), {EnrollRoleLearner}, fill(32, 1), nil, nil, []byte("10.0.0.7"), []byte("10.0.0.7:6680")}
}

func rowWith(i int, b []byte) []byte {
	r := goodRow()
	r[i] = b
	return rec(r...)
}

func enrollmentList(state, seconds []byte, rows ...[]byte) func() error {
	payload := rec(state, seconds, list(rows...))
	return func() error { _, err := ParseEnrollmentList(payload); return err }
}

func TestParseEnrollmentListRefusals(t *testing.T) {
	mf, tl := wire.CodeMalformedFrame, true
	manual, left := []byte{EnrollStateManual}, u64(0)
	good := rec(goodRow()...)
	rowOf := func(n int) []byte { return rec(append(goodRow(), repeat(n-enrollmentRowFields, nil)...)...) }
	checkRefusals(t, []refusalCase{
		{"two fields", func() error { _, err := ParseEnrollmentList(rec(manual, left)); return err }, "body", mf, false},
		{"four fields", func() error { _, err := ParseEnrollmentList(rec(manual, left, nil, nil)); return err }, "body", mf, false},
		{"state 01", enrollmentList([]byte{1}, left), "state", mf, false},
		{"state 05", enrollmentList([]byte{5}, left), "state", mf, false},
		{"state empty", enrollmentList(nil, left), "state", mf, false},
		{"seconds left 4 bytes", enrollmentList(manual, u32(0)), "secondsLeft", mf, false},
		{"seconds left empty", enrollmentList(manual, nil), "secondsLeft", mf, false},
		{"rows not a field list", func() error { _, err := ParseEnrollmentList(rec(manual, left, []byte{0, 0, 0, 9})); return err },
			"rows", mf, false},
		{"65 rows", enrollmentList(manual, left, repeat(MaxEnrollmentRows+1, good)...), "rows", mf, tl},
		{"row of 12 fields", enrollmentList(manual, left, good, rec(goodRow()[:12]...)), "row", mf, false},
		{"empty row", enrollmentList(manual, left, nil), "row", mf, false},
		{"row not a field list", enrollmentList(manual, left, []byte{0, 0, 0, 9}), "row", mf, false},
		{"row of 65 fields", enrollmentList(manual, left, rowOf(65)), "row", mf, tl},
		{"empty id", enrollmentList(manual, left, rowWith(0, nil)), "id", mf, false},
		{"endpoint 261 bytes", enrollmentList(manual, left, rowWith(1, text(261))), "endpoint", mf, tl},
		{"peer host not UTF-8", enrollmentList(manual, left, rowWith(2, notUTF8)), "peerHost", mf, false},
		{"first seen 4 bytes", enrollmentList(manual, left, rowWith(3, u32(1))), "firstSeenAgo", mf, false},
		{"attempts 8 bytes", enrollmentList(manual, left, rowWith(4, u64(1))), "attempts", mf, false},
		{"claims changed empty", enrollmentList(manual, left, rowWith(6, nil)), "claimsChanged", mf, false},
		{"decision empty", enrollmentList(manual, left, rowWith(5, nil)), "decision", mf, false},
		{"decision two bytes", enrollmentList(manual, left, rowWith(5, []byte{0, RowPending})), "decision", mf, false},
		{"role empty", enrollmentList(manual, left, rowWith(7, nil)), "role", mf, false},
		{"role two bytes", enrollmentList(manual, left, rowWith(7, []byte{0, EnrollRoleLearner})), "role", mf, false},
		{"key 31 bytes", enrollmentList(manual, left, rowWith(8, fill(31, 1))), "key", mf, false},
		{"roster fingerprint 31 bytes", enrollmentList(manual, left, rowWith(9, fill(31, 1))), "rosterFingerprint", mf, false},
		{"auto-approved 4 bytes", enrollmentList(manual, left, rowWith(10, u32(1))), "autoApprovedArmedAgo", mf, false},
		{"first peer host 261 bytes", enrollmentList(manual, left, rowWith(11, text(261))), "firstPeerHost", mf, tl},
		{"raft endpoint not UTF-8", enrollmentList(manual, left, rowWith(12, notUTF8)), "raftEndpoint", mf, false},
	})
}

// TestEnrollmentRowSurplusIgnored: a row may carry fields a later build adds; this one reads its
// thirteen and ignores the rest, up to the row's bound of 64.
func TestEnrollmentRowSurplusIgnored(t *testing.T) {
	want, err := ParseEnrollmentList(rec([]byte{EnrollStateAuto}, u64(90), list(rec(goodRow()...))))
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{14, 64} {
		row := append(goodRow(), repeat(n-enrollmentRowFields, []byte("later"))...)
		got, err := ParseEnrollmentList(rec([]byte{EnrollStateAuto}, u64(90), list(rec(row...))))
		if err != nil {
			t.Fatalf("a row of %d fields: %v", n, err)
		}
		if diff := cmp.Diff(want, got, diffOpts); diff != "" {
			t.Fatalf("a row of %d fields (-13 fields +%d):\n%s", n, n, diff)
		}
	}
}

func genEnrollmentRow(t *rapid.T) EnrollmentRow {
	r := EnrollmentRow{
		ID: genText(1, MaxID).Draw(t, "id"), Endpoint: genText(0, MaxEndpoint).Draw(t, "endpoint"),
		PeerHost: genText(0, MaxEndpoint).Draw(t, "peer"), FirstSeenAgo: rapid.Uint64().Draw(t, "firstSeen"),
		Attempts: rapid.Uint32().Draw(t, "attempts"), ClaimsChanged: rapid.Uint32().Draw(t, "claims"),
		Decision: rapid.SampledFrom([]uint8{RowPending, RowApproved, RowRejected}).Draw(t, "decision"),
		Role:     EnrollRoleLearner, Key: rapid.SliceOfN(rapid.Byte(), 32, 32).Draw(t, "key"),
		AutoApprovedAgo: genOpt64(t, "autoApproved"), FirstPeerHost: genText(0, MaxEndpoint).Draw(t, "firstPeer"),
		RaftEndpoint: genText(0, MaxEndpoint).Draw(t, "raft"),
	}
	if r.Decision == RowApproved {
		r.RosterFP = rapid.SliceOfN(rapid.Byte(), 32, 32).Draw(t, "rosterFP")
	}
	return r
}

func genEnrollmentList(t *rapid.T) EnrollmentList {
	return EnrollmentList{
		State:       rapid.SampledFrom([]uint8{EnrollStateManual, EnrollStateAuto}).Draw(t, "state"),
		SecondsLeft: rapid.Uint64().Draw(t, "secondsLeft"),
		Rows:        rapid.SliceOfN(rapid.Custom(genEnrollmentRow), 0, 6).Draw(t, "rows"),
	}
}

func TestRoundTripEnrollmentList(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		l := genEnrollmentList(t)
		got, err := ParseEnrollmentList(l.Append(nil))
		checkRoundTrip(t, l, got, err)
	})
}

// TestEnrollControlNamesTheVerb: the refusal names a verb as the listing beside it does, two
// hex digits.
func TestEnrollControlNamesTheVerb(t *testing.T) {
	_, err := ParseEnrollControl([][]byte{{4}, nil})
	if err == nil || !strings.Contains(err.Error(), ": 04 is not an enrollment verb") {
		t.Fatalf("got %v", err)
	}
}
