package fleet

import (
	"fmt"
	"github.com/buildfleet/buildfleet/internal/pace/edkey"
	"maps"
	"slices"

	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// SnapshotVersion is the first byte of an encoded snapshot.
const SnapshotVersion = 1

// Layout: version byte, then exactly four fields: cluster id, member list
// (one nested field per member), revocation list (one nested (id, key)
// record per forget, in the order they applied), settings (name, value
// pairs in SettingNames order).
const (
	snapshotFields = 4
	memberFields   = 9
)

// EncodeSnapshot encodes the whole state canonically: members by id,
// revocations in the order they applied, every setting in a fixed order. Equal states
// encode to equal bytes, and DecodeSnapshot accepts only canonical bytes.
func EncodeSnapshot(s *State) []byte {
	b := []byte{SnapshotVersion}
	b = wire.AppendStringField(b, s.clusterID)
	b, mark := wire.BeginField(b)
	for _, id := range slices.Sorted(maps.Keys(s.members)) {
		b = appendMember(b, s.members[id])
	}
	b = wire.EndField(b, mark)
	b, mark = wire.BeginField(b)
	for _, k := range s.revokedIn {
		rec, recMark := wire.BeginField(b)
		rec = wire.AppendStringField(rec, s.revoked[k])
		b = wire.EndField(wire.AppendField(rec, k[:]), recMark)
	}
	b = wire.EndField(b, mark)
	b, mark = wire.BeginField(b)
	for _, name := range SettingNames() {
		v, _ := s.settings.Value(name)
		b = wire.AppendStringField(wire.AppendStringField(b, name), v)
	}
	return wire.EndField(b, mark)
}

func appendMember(b []byte, m *Member) []byte {
	b, mark := wire.BeginField(b)
	b = wire.AppendStringField(b, m.ID)
	b = wire.AppendU8Field(b, uint8(m.Seat))
	b = wire.AppendU8Field(b, boolByte(m.PromotionPending))
	b = wire.AppendStringField(b, m.RaftEndpoint)
	b = wire.AppendStringField(b, m.NodeEndpoint)
	b = wire.AppendStringField(b, m.SchedulerEndpoint)
	b = wire.AppendU8Field(b, uint8(m.Endpoints))
	b = wire.AppendField(b, m.Key)
	b = wire.AppendU64Field(b, m.AnnounceSeq)
	return wire.EndField(b, mark)
}

func boolByte(v bool) uint8 {
	if v {
		return 1
	}
	return 0
}

// DecodeSnapshot rebuilds a State from EncodeSnapshot's bytes. It refuses
// anything that is not a canonical encoding of a consistent state: counts
// over the caps, unsorted or duplicate records, a key held twice or held by
// a member while revoked, a founded cluster without a voter.
func DecodeSnapshot(b []byte) (*State, error) {
	if len(b) < 1 || b[0] != SnapshotVersion {
		return nil, fmt.Errorf("%w: snapshot does not start with version %d", ErrMalformed, SnapshotVersion)
	}
	f, err := wire.SplitFields(nil, b[1:], snapshotFields)
	if err != nil {
		return nil, fmt.Errorf("%w: snapshot: %v", ErrMalformed, err)
	}
	s := New()
	if len(f[0]) > 0 {
		s.clusterID = string(f[0])
		if err := CheckClusterID(s.clusterID); err != nil {
			return nil, fmt.Errorf("%w: snapshot: %v", ErrMalformed, err)
		}
	}
	if err := decodeRevoked(s, f[2]); err != nil {
		return nil, err
	}
	if err := decodeMembers(s, f[1]); err != nil {
		return nil, err
	}
	if err := decodeSettings(s, f[3]); err != nil {
		return nil, err
	}
	if s.Founded() != s.HasVoters() || (!s.Founded() && len(s.revoked) > 0) {
		return nil, fmt.Errorf("%w: snapshot: a founded cluster needs a voter and an unfounded one holds nothing", ErrMalformed)
	}
	return s, nil
}

func decodeRevoked(s *State, list []byte) error {
	n, err := wire.CountFields(list)
	if err != nil || n > MaxRevoked {
		return fmt.Errorf("%w: snapshot: revocation list of %d records: %v", ErrMalformed, n, err)
	}
	records, _ := wire.SplitFields(make([][]byte, 0, n), list, n)
	for i, rec := range records {
		f, err := wire.SplitFields(nil, rec, 2)
		if err != nil {
			return fmt.Errorf("%w: snapshot: revocation %d: %v", ErrMalformed, i+1, err)
		}
		var d decoder
		id, key := d.text(f[0], MaxIDLen), d.key(f[1], false)
		if err := d.err("revocation"); err != nil {
			return err
		}
		if err := CheckMemberID(id); err != nil {
			return fmt.Errorf("%w: snapshot: revocation %d: %v", ErrMalformed, i+1, err)
		}
		if s.Revoked(key) {
			return fmt.Errorf("%w: snapshot: key %s revoked twice", ErrMalformed, edkey.Text(key))
		}
		s.revoke(id, keyBytes(key))
	}
	return nil
}

func decodeMembers(s *State, list []byte) error {
	n, err := wire.CountFields(list)
	if err != nil || n > MaxMembers {
		return fmt.Errorf("%w: snapshot: member list of %d records: %v", ErrMalformed, n, err)
	}
	records, _ := wire.SplitFields(make([][]byte, 0, n), list, n)
	prevID := ""
	for i, rec := range records {
		m, err := decodeMember(rec)
		if err != nil {
			return fmt.Errorf("%w: snapshot: member %d: %v", ErrMalformed, i+1, err)
		}
		if i > 0 && m.ID <= prevID {
			return fmt.Errorf("%w: snapshot: members not strictly ascending by id at %q", ErrMalformed, m.ID)
		}
		if err := checkDecodedMember(s, m); err != nil {
			return fmt.Errorf("%w: snapshot: member %q: %v", ErrMalformed, m.ID, err)
		}
		s.putMember(m)
		prevID = m.ID
	}
	return nil
}

func decodeMember(rec []byte) (*Member, error) {
	f, err := wire.SplitFields(nil, rec, memberFields)
	if err != nil {
		return nil, err
	}
	var d decoder
	m := &Member{
		ID:                d.text(f[0], MaxIDLen),
		Seat:              Seat(d.u8(f[1])),
		RaftEndpoint:      d.text(f[3], MaxEndpointLen),
		NodeEndpoint:      d.text(f[4], MaxEndpointLen),
		SchedulerEndpoint: d.text(f[5], MaxEndpointLen),
		Endpoints:         EndpointState(d.u8(f[6])),
		Key:               d.key(f[7], false),
		AnnounceSeq:       d.u64(f[8]),
	}
	switch d.u8(f[2]) {
	case 0:
	case 1:
		m.PromotionPending = true
	default:
		d.fail(fmt.Errorf("promotion flag is neither 0 nor 1"))
	}
	return m, d.err("member")
}

// checkDecodedMember holds a decoded record to the invariants Apply keeps.
func checkDecodedMember(s *State, m *Member) error {
	if err := CheckMemberID(m.ID); err != nil {
		return err
	}
	if !m.Seat.valid() || !m.Endpoints.valid() || (m.PromotionPending && m.Seat != Learner) {
		return fmt.Errorf("seat %d, pending %v, endpoint state %d", m.Seat, m.PromotionPending, m.Endpoints)
	}
	for _, ep := range []string{m.RaftEndpoint, m.NodeEndpoint, m.SchedulerEndpoint} {
		if err := checkOptEndpoint(ep); err != nil {
			return err
		}
	}
	if (m.NodeEndpoint != "" || m.SchedulerEndpoint != "") != (m.Endpoints == Announced) {
		return fmt.Errorf("endpoint state %s disagrees with the endpoints", m.Endpoints)
	}
	if _, taken := s.byRaftID[RaftID(m.ID)]; taken {
		return fmt.Errorf("raft id collides with another member")
	}
	if _, taken := s.byKey[keyBytes(m.Key)]; taken || s.Revoked(m.Key) {
		return fmt.Errorf("key %s is held by another member or revoked", edkey.Text(m.Key))
	}
	return nil
}

func decodeSettings(s *State, list []byte) error {
	names := SettingNames()
	f, err := wire.SplitFields(make([][]byte, 0, 2*len(names)), list, 2*len(names))
	if err != nil {
		return fmt.Errorf("%w: snapshot settings: %v", ErrMalformed, err)
	}
	for i, name := range names {
		if string(f[2*i]) != name {
			return fmt.Errorf("%w: snapshot settings: %q where %q belongs", ErrMalformed, f[2*i], name)
		}
		value := string(f[2*i+1])
		next, err := s.settings.with(name, value)
		if err != nil {
			return fmt.Errorf("%w: snapshot settings: %v", ErrMalformed, err)
		}
		if canon, _ := next.Value(name); canon != value {
			return fmt.Errorf("%w: snapshot settings: %s %q is not canonical (%q)", ErrMalformed, name, value, canon)
		}
		s.settings = next
	}
	return nil
}
