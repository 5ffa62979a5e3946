package wire

import (
	"strconv"
	"strings"
	"testing"
)

// specOpTable is pace-wire §1.12 transcribed row by row: op, name, arity,
// statuses (O ok, M miss, E error, P progress, U push), cap ("session" or
// bytes), gate, family, reply ceiling ("-" = unbounded by verb).
const specOpTable = `
01 STORE 5 OE session none cache 67108864
02 FETCH 1 OME session none cache -
03 AUTH 3 OE 4096 pre session 65536
04 REGISTER 5 OE 65536 id scheduler 67108864
05 HEARTBEAT 3 OE 65536 id scheduler 67108864
06 LEASE 5 OE 65536 none scheduler 67108864
07 COMPILE 10 OEP session none compile -
08 CLUSTER-STATUS 0 OE 65536 none scheduler 67108864
09 CLUSTER-SET 2 OE 65536 op scheduler 67108864
0A CLUSTER-FORGET 1 OE 65536 op scheduler 67108864
0B CLUSTER-ADMIT 3 OE 65536 op scheduler 67108864
0C RELEASE 2 OE 65536 none scheduler 67108864
0D WITHDRAW 1 OE 65536 id scheduler 67108864
0E NODE-STATUS 0 OE 65536 none node 67108864
0F NODE-METRICS 0 OE 65536 none node 67108864
10 ENROLL 8 OE 1024 pre enrollment 4194304
11 ENROLL-CONTROL 2 OE 65536 op enrollment 67108864
12 SUBSCRIBE 3 OEU 65536 none live 67108864
13 CORDON 1 OE 65536 loopback-only compile 65536
14 FLEET-TEXT 3 OE 65536 none fleet 67108864
15 CACHE-DROP 1 OME 65536 none cache 67108864
18 NODE-CHALLENGE 2 OE 512 none node-proof 4194304
19 PROVE-NODE 3 OE 512 none node-proof 4194304
1A NODE-ANNOUNCE 4 OE 65536 id scheduler 65536
1B EXPLAIN-ADMISSION 1 OE 512 pre node 65536
1C CLUSTER-ADMIT-LEARNER 3 OE 65536 op scheduler 67108864
1E MINT-TICKET 1 OE 512 loopback-only session 65536
1F FLEET-SUMMARY 1 OE 64 pre formation 65536
20 SHARED-FETCH 1 OME session none shared-cache -
21 SHARED-STORE 5 OE session none shared-cache 67108864
`

func TestOpTableMatchesSpec(t *testing.T) {
	seen := 0
	for _, line := range strings.Split(strings.TrimSpace(specOpTable), "\n") {
		col := strings.Fields(line)
		b, _ := strconv.ParseUint(col[0], 16, 8)
		info, ok := Lookup(Op(b))
		if !ok {
			t.Errorf("%s: op 0x%s unknown", col[1], col[0])
			continue
		}
		seen++
		got := []string{col[0], info.Name, strconv.Itoa(info.Arity), statusLetters(info.Statuses),
			capText(info), info.Gate.String(), info.Family.String(), ceilingText(info)}
		if strings.Join(got, " ") != line {
			t.Errorf("op table row\n got  %s\n want %s", strings.Join(got, " "), line)
		}
	}
	if seen != len(KnownOps()) {
		t.Errorf("pace-wire §1.12 lists %d live ops, table knows %d", seen, len(KnownOps()))
	}
}

func statusLetters(s StatusSet) string {
	var b strings.Builder
	for _, st := range []struct {
		s Status
		l byte
	}{{StatusOk, 'O'}, {StatusMiss, 'M'}, {StatusError, 'E'}, {StatusProgress, 'P'}, {StatusPush, 'U'}} {
		if s.Has(st.s) {
			b.WriteByte(st.l)
		}
	}
	return b.String()
}

func capText(i OpInfo) string {
	if i.SessionCapped() {
		return "session"
	}
	return strconv.FormatUint(uint64(i.Cap), 10)
}

func ceilingText(i OpInfo) string {
	if i.ReplyCeiling == 0 {
		return "-"
	}
	return strconv.FormatUint(uint64(i.ReplyCeiling), 10)
}

func TestRetiredAndUnknownOps(t *testing.T) {
	for _, op := range []Op{0x16, 0x17, 0x1D} {
		if _, ok := Lookup(op); ok || !op.Retired() {
			t.Errorf("op 0x%02x must be retired and not served", uint8(op))
		}
	}
	for _, op := range []Op{0x00, 0x22, 0xFF} {
		if _, ok := Lookup(op); ok || op.Retired() {
			t.Errorf("op 0x%02x must be unknown", uint8(op))
		}
	}
	if OpFetch.String() != "FETCH" || Op(0x16).String() != "op-0x16" {
		t.Errorf("names: %s %s", OpFetch, Op(0x16))
	}
}

func TestOpLimits(t *testing.T) {
	fetch, _ := Lookup(OpFetch)
	auth, _ := Lookup(OpAuth)
	tests := []struct {
		info    OpInfo
		session uint32
		want    uint32
	}{
		{fetch, DefaultSessionCap, DefaultSessionCap},
		{fetch, 1 << 20, 1 << 20},
		{auth, DefaultSessionCap, MaxAuthPayload},
		{auth, 1000, 1000},
	}
	for _, tt := range tests {
		if got := tt.info.Limit(tt.session); got != tt.want {
			t.Errorf("%s.Limit(%d) = %d, want %d", tt.info.Name, tt.session, got, tt.want)
		}
	}
	if fetch.ReplyLimit(77) != 77 || auth.ReplyLimit(77) != MaxRefusalReply {
		t.Error("reply limits: unbounded verbs take the client's cap, bounded ones their ceiling")
	}
}
