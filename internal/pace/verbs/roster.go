package verbs

import (
	"crypto/sha256"
	"encoding/base64"

	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// Roster is the fleet an approved enrollment answers (pace-wire §1.13): the cluster and every
// member with its seat, endpoints and key. It is public (any member's status shows as much);
// what makes it trustworthy to a joiner is the leader's signature over the answer carrying it.
type Roster struct {
	ClusterID string
	Members   []RosterMember
}

// RosterMember is one member of a Roster.
type RosterMember struct {
	ID           string
	Seat         uint8 // 1 voter, 2 learner (the fleet's own seat numbers)
	RaftEndpoint string
	NodeEndpoint string
	Key          []byte // 32 bytes
}

// Roster bounds: the fleet records at most 4096 members.
const (
	MaxRosterMembers  = 4096
	rosterFields      = 2
	rosterMemberArity = 5
)

// AppendRoster appends r as one record `[clusterId][members: [id][u8 seat][raft][node][key]…]`.
func AppendRoster(dst []byte, r Roster) []byte {
	dst = wire.AppendStringField(dst, r.ClusterID)
	members, mark := wire.BeginField(dst)
	for _, m := range r.Members {
		one, at := wire.BeginField(members)
		one = wire.AppendStringField(one, m.ID)
		one = wire.AppendU8Field(one, m.Seat)
		one = wire.AppendStringField(one, m.RaftEndpoint)
		one = wire.AppendStringField(one, m.NodeEndpoint)
		one = wire.AppendField(one, m.Key)
		members = wire.EndField(one, at)
	}
	return wire.EndField(members, mark)
}

// ParseRoster reads a roster record.
func ParseRoster(b []byte) (Roster, error) {
	p := newParser(wire.OpEnroll)
	f := p.split(b, rosterFields)
	if p.failed() {
		return Roster{}, p.result()
	}
	r := Roster{ClusterID: p.required(f[0], "roster.clusterId", MaxID)}
	entries := p.list(f[1], "roster.members", MaxRosterMembers)
	r.Members = make([]RosterMember, 0, len(entries))
	seen := make(map[string]bool, len(entries))
	for _, e := range entries {
		mf := p.split(e, rosterMemberArity)
		if p.failed() {
			break
		}
		m := RosterMember{ID: p.required(mf[0], "roster.id", MaxID), RaftEndpoint: p.text(mf[2], "roster.raft", MaxEndpoint),
			NodeEndpoint: p.text(mf[3], "roster.node", MaxEndpoint), Key: make([]byte, enrollKeyLen)}
		if seat, err := wire.U8(mf[1]); err != nil || seat < 1 || seat > 2 {
			p.malformed("roster.seat", "not 01 voter or 02 learner")
		} else {
			m.Seat = seat
		}
		p.exact(mf[4], "roster.key", m.Key)
		if seen[m.ID] && !p.failed() {
			p.malformed("roster.id", "%q is listed twice", m.ID)
		}
		seen[m.ID] = true
		r.Members = append(r.Members, m)
	}
	if p.failed() {
		return Roster{}, p.result()
	}
	return r, nil
}

// Member finds id in the roster.
func (r Roster) Member(id string) (RosterMember, bool) {
	for _, m := range r.Members {
		if m.ID == id {
			return m, true
		}
	}
	return RosterMember{}, false
}

// RosterFingerprint is what a joiner prints: `SHA256:` and 43 characters of unpadded base64
// of the SHA-256 of the roster record as received, the form ssh prints key fingerprints in.
func RosterFingerprint(record []byte) string {
	sum := sha256.Sum256(record)
	return "SHA256:" + base64.RawStdEncoding.EncodeToString(sum[:])
}
