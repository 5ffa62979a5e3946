package verbs

import (
	"strconv"

	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// ENROLL-CONTROL verbs (pace-wire §1.13); 01, 02 and 04 are retired.
const (
	EnrollList        uint8 = 3
	EnrollReject      uint8 = 5
	EnrollAutoApprove uint8 = 6
	EnrollAutoOff     uint8 = 7
	EnrollClear       uint8 = 8
	EnrollApprove     uint8 = 9
)

// Window states an ENROLL-CONTROL answer reports.
const (
	EnrollStateManual uint8 = 3
	EnrollStateAuto   uint8 = 4
)

// Row decisions (03 retired).
const (
	RowPending  uint8 = 1
	RowApproved uint8 = 2
	RowRejected uint8 = 4
)

// MaxAutoApproveSeconds bounds an auto-approve window: a day.
const MaxAutoApproveSeconds = 24 * 60 * 60

// EnrollControl is ENROLL-CONTROL `[u8 verb][subject]`.
type EnrollControl struct {
	Verb    uint8
	ID      string // reject, approve
	Key     []byte // approve: the 32 raw key bytes after the id
	Seconds uint64 // auto-approve
}

// Append appends the request payload.
func (c EnrollControl) Append(dst []byte) []byte {
	dst = wire.AppendU8Field(dst, c.Verb)
	switch c.Verb {
	case EnrollReject:
		return wire.AppendStringField(dst, c.ID)
	case EnrollApprove:
		return wire.AppendField(dst, append([]byte(c.ID), c.Key...))
	case EnrollAutoApprove:
		return wire.AppendStringField(dst, strconv.FormatUint(c.Seconds, 10))
	}
	return wire.AppendEmptyField(dst)
}

// ParseEnrollControl reads an ENROLL-CONTROL request.
func ParseEnrollControl(fields [][]byte) (EnrollControl, error) {
	p := newParser(wire.OpEnrollControl)
	if !p.arity(fields, 2) {
		return EnrollControl{}, p.result()
	}
	verb, err := wire.U8(fields[0])
	if err != nil {
		p.malformed("verb", "%v", err)
		return EnrollControl{}, p.result()
	}
	c, subject := EnrollControl{Verb: verb}, fields[1]
	switch verb {
	case EnrollList, EnrollAutoOff, EnrollClear:
		if len(subject) != 0 {
			p.malformed("subject", "this verb takes none")
		}
	case EnrollReject:
		c.ID = p.required(subject, "id", MaxID)
	case EnrollApprove:
		if len(subject) <= enrollKeyLen {
			p.malformed("subject", "approve takes the id followed by the 32 key bytes")
			break
		}
		c.ID = p.text(subject[:len(subject)-enrollKeyLen], "id", MaxID)
		c.Key = append([]byte(nil), subject[len(subject)-enrollKeyLen:]...)
	case EnrollAutoApprove:
		c.Seconds = p.seconds(subject)
	default:
		p.malformed("verb", "%02x is not an enrollment verb (03 list, 05 reject, 06 auto-approve, 07 auto-approve-off, 08 clear, 09 approve)", verb)
	}
	if p.failed() {
		return EnrollControl{}, p.result()
	}
	return c, nil
}

// seconds reads auto-approve's whole-field ASCII decimal, 1 s to a day.
func (p *parser) seconds(f []byte) uint64 {
	if len(f) == 0 || len(f) > 6 {
		p.malformed("seconds", "want ASCII decimal seconds, 1 to %d", MaxAutoApproveSeconds)
		return 0
	}
	for _, b := range f {
		if b < '0' || b > '9' {
			p.malformed("seconds", "want ASCII decimal seconds, 1 to %d", MaxAutoApproveSeconds)
			return 0
		}
	}
	n, _ := strconv.ParseUint(string(f), 10, 64)
	if n == 0 || n > MaxAutoApproveSeconds {
		p.malformed("seconds", "%d is outside 1 to %d (a window is time-boxed to a day)", n, MaxAutoApproveSeconds)
		return 0
	}
	return n
}

// EnrollmentRow is one machine on the leader's enrollment list.
type EnrollmentRow struct {
	ID              string
	Endpoint        string
	PeerHost        string // the host that last polled
	FirstSeenAgo    uint64 // seconds
	Attempts        uint32
	Decision        uint8
	ClaimsChanged   uint32 // polls under this id with another key or endpoint, never recorded
	Role            uint8
	Key             []byte
	RosterFP        []byte // SHA-256 of the roster answered, once approved
	AutoApprovedAgo Opt[uint64]
	FirstPeerHost   string
	RaftEndpoint    string // where a later --cluster-admit would find its consensus port
}

const enrollmentRowFields = 13

// EnrollmentList is ENROLL-CONTROL's answer `[u8 state][u64 secondsLeft][rows]`.
type EnrollmentList struct {
	State       uint8
	SecondsLeft uint64
	Rows        []EnrollmentRow
}

// Append appends the answer.
func (l EnrollmentList) Append(dst []byte) []byte {
	dst = wire.AppendU8Field(dst, l.State)
	dst = wire.AppendU64Field(dst, l.SecondsLeft)
	rows, mark := wire.BeginField(dst)
	for _, r := range l.Rows {
		one, at := wire.BeginField(rows)
		one = wire.AppendStringField(one, r.ID)
		one = wire.AppendStringField(one, r.Endpoint)
		one = wire.AppendStringField(one, r.PeerHost)
		one = wire.AppendU64Field(one, r.FirstSeenAgo)
		one = wire.AppendU32Field(one, r.Attempts)
		one = wire.AppendU8Field(one, r.Decision)
		one = wire.AppendU32Field(one, r.ClaimsChanged)
		one = wire.AppendU8Field(one, r.Role)
		one = wire.AppendField(one, r.Key)
		one = wire.AppendField(one, r.RosterFP)
		one = wire.AppendOptU64Field(one, r.AutoApprovedAgo.Value, r.AutoApprovedAgo.Present)
		one = wire.AppendStringField(one, r.FirstPeerHost)
		one = wire.AppendStringField(one, r.RaftEndpoint)
		rows = wire.EndField(one, at)
	}
	return wire.EndField(rows, mark)
}

// MaxEnrollmentRows is the leader's bound on its list (pace-node §9.3).
const MaxEnrollmentRows = 64

// ParseEnrollmentList reads ENROLL-CONTROL's answer (the operator's side). Rows may carry
// fields beyond the ones this build knows; those are ignored.
func ParseEnrollmentList(payload []byte) (EnrollmentList, error) {
	p := newParser(wire.OpEnrollControl)
	f := p.split(payload, 3)
	if p.failed() {
		return EnrollmentList{}, p.result()
	}
	l := EnrollmentList{SecondsLeft: p.u64(f[1], "secondsLeft")}
	if st, err := wire.U8(f[0]); err != nil || (st != EnrollStateManual && st != EnrollStateAuto) {
		p.malformed("state", "not 03 manual or 04 auto-approve")
	} else {
		l.State = st
	}
	for _, e := range p.list(f[2], "rows", MaxEnrollmentRows) {
		l.Rows = append(l.Rows, p.enrollmentRow(e))
	}
	if p.failed() {
		return EnrollmentList{}, p.result()
	}
	return l, nil
}

func (p *parser) enrollmentRow(e []byte) EnrollmentRow {
	rf := p.list(e, "row", 64)
	if p.failed() || len(rf) < enrollmentRowFields {
		p.malformed("row", "%d fields where a row has at least %d", len(rf), enrollmentRowFields)
		return EnrollmentRow{}
	}
	r := EnrollmentRow{ID: p.required(rf[0], "id", MaxID), Endpoint: p.text(rf[1], "endpoint", MaxEndpoint),
		PeerHost: p.text(rf[2], "peerHost", MaxEndpoint), FirstSeenAgo: p.u64(rf[3], "firstSeenAgo"),
		Attempts: p.u32(rf[4], "attempts"), ClaimsChanged: p.u32(rf[6], "claimsChanged"),
		Key: make([]byte, enrollKeyLen), RosterFP: p.optExact(rf[9], "rosterFingerprint", 32),
		AutoApprovedAgo: p.opt64(rf[10], "autoApprovedArmedAgo"), FirstPeerHost: p.text(rf[11], "firstPeerHost", MaxEndpoint),
		RaftEndpoint: p.text(rf[12], "raftEndpoint", MaxEndpoint)}
	r.Decision, r.Role = p.rowByte(rf[5], "decision"), p.rowByte(rf[7], "role")
	p.exact(rf[8], "key", r.Key)
	return r
}

// rowByte reads a one-byte row field of any value: a newer leader's decision or role is shown
// as it comes, but a field of another width is no row of this grammar.
func (p *parser) rowByte(f []byte, field string) uint8 {
	if p.failed() {
		return 0
	}
	v, err := wire.U8(f)
	if err != nil {
		p.malformed(field, "%v", err)
	}
	return v
}
