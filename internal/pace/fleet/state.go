package fleet

import (
	"bytes"
	"crypto/ed25519"
	"maps"
	"slices"
	"strings"
)

// Seat is a member's place in consensus.
type Seat uint8

// Seats (pace-node §1.2): a voter is counted by every quorum; a learner is
// replicated to and applies the state but never votes or leads.
const (
	Voter   Seat = 1
	Learner Seat = 2
)

func (s Seat) String() string {
	switch s {
	case Voter:
		return "voter"
	case Learner:
		return "learner"
	}
	return "unknown-seat"
}

func (s Seat) valid() bool { return s == Voter || s == Learner }

// EndpointState says why a member's node and scheduler endpoints are what they
// are; status prints "- (never-announced)" or "- (cleared)" (pace-node §3.2).
type EndpointState uint8

// Endpoint states.
const (
	NeverAnnounced EndpointState = 0
	Announced      EndpointState = 1
	Cleared        EndpointState = 2 // a re-admission moved the member; it has not announced since
)

func (e EndpointState) String() string {
	switch e {
	case NeverAnnounced:
		return "never-announced"
	case Announced:
		return "announced"
	case Cleared:
		return "cleared"
	}
	return "unknown-endpoint-state"
}

func (e EndpointState) valid() bool { return e <= Cleared }

// Member is one member record. Values returned by State are copies.
type Member struct {
	ID   string
	Seat Seat
	// PromotionPending marks a member admitted as a voter that sits as a
	// learner until it holds every committed entry (pace-consensus §7.1: every
	// new member enters as a learner); a later Admit as voter promotes it.
	PromotionPending  bool
	RaftEndpoint      string // the consensus endpoint peers dial
	NodeEndpoint      string // the 0xFC endpoint; "" until announced
	SchedulerEndpoint string // where it served the scheduler when it last announced as leader
	Endpoints         EndpointState
	Key               ed25519.PublicKey // always recorded (pace-consensus §7.5: no key and none recorded is refused)
	AnnounceSeq       uint64            // highest announcement applied; an older one cannot undo a move
}

// RaftID is the member's Raft node id.
func (m Member) RaftID() uint64 { return RaftID(m.ID) }

func (m *Member) copyOut() Member {
	c := *m
	c.Key = slices.Clone(m.Key)
	return c
}

type keyBytes = [ed25519.PublicKeySize]byte

func keyOf(k ed25519.PublicKey) (kb keyBytes, ok bool) {
	if len(k) != ed25519.PublicKeySize {
		return kb, false
	}
	return keyBytes(k), true
}

// State is one applied fleet state. It is immutable: Apply builds a new
// State, so a State may be read from any number of goroutines.
type State struct {
	clusterID string
	members   map[string]*Member
	byRaftID  map[uint64]*Member
	byKey     map[keyBytes]*Member
	revoked   map[keyBytes]string // revoked key -> the id forgotten with it
	revokedIn []keyBytes          // revocation order, append-only (never appended in place)
	forgotten map[string]keyBytes // forgotten id -> the key most recently revoked with it
	settings  Settings
	voters    int
}

// New returns the state of a cluster nobody has founded yet: no cluster id,
// no members, default settings.
func New() *State {
	return &State{
		members:   map[string]*Member{},
		byRaftID:  map[uint64]*Member{},
		byKey:     map[keyBytes]*Member{},
		revoked:   map[keyBytes]string{},
		forgotten: map[string]keyBytes{},
		settings:  DefaultSettings(),
	}
}

// ClusterID is the id minted by the founder; "" before the Found entry.
func (s *State) ClusterID() string { return s.clusterID }

// Founded reports whether the Found entry has been applied.
func (s *State) Founded() bool { return s.clusterID != "" }

// HasVoters reports whether the state names at least one voter.
func (s *State) HasVoters() bool { return s.voters > 0 }

// VoterKey returns the key of a live voter (a learner, even one pending
// promotion, is not a voter).
func (s *State) VoterKey(id string) (ed25519.PublicKey, bool) {
	m, ok := s.members[id]
	if !ok || m.Seat != Voter || s.Revoked(m.Key) {
		return nil, false
	}
	return slices.Clone(m.Key), true
}

// MemberKey returns the key of a voter or learner.
func (s *State) MemberKey(id string) (ed25519.PublicKey, bool) {
	m, ok := s.members[id]
	if !ok || s.Revoked(m.Key) {
		return nil, false
	}
	return slices.Clone(m.Key), true
}

// Revoked reports whether a forget revoked key.
func (s *State) Revoked(key ed25519.PublicKey) bool {
	kb, ok := keyOf(key)
	if !ok {
		return false
	}
	_, revoked := s.revoked[kb]
	return revoked
}

// Member returns the record of id.
func (s *State) Member(id string) (Member, bool) {
	m, ok := s.members[id]
	if !ok {
		return Member{}, false
	}
	return m.copyOut(), true
}

// MemberByRaftID returns the member whose Raft node id is raftID.
func (s *State) MemberByRaftID(raftID uint64) (Member, bool) {
	m, ok := s.byRaftID[raftID]
	if !ok {
		return Member{}, false
	}
	return m.copyOut(), true
}

// MemberByKey returns the member holding key.
func (s *State) MemberByKey(key ed25519.PublicKey) (Member, bool) {
	kb, ok := keyOf(key)
	if !ok {
		return Member{}, false
	}
	m, ok := s.byKey[kb]
	if !ok {
		return Member{}, false
	}
	return m.copyOut(), true
}

// Members returns every member sorted by id.
func (s *State) Members() []Member {
	out := make([]Member, 0, len(s.members))
	for _, id := range slices.Sorted(maps.Keys(s.members)) {
		out = append(out, s.members[id].copyOut())
	}
	return out
}

// Len is the number of members; Voters the number of voters among them.
func (s *State) Len() int    { return len(s.members) }
func (s *State) Voters() int { return s.voters }

// Revocation is one revoked key and the member id forgotten with it.
type Revocation struct {
	ID  string
	Key ed25519.PublicKey
}

// Revocations returns every revocation in the order the forgets applied.
func (s *State) Revocations() []Revocation {
	out := make([]Revocation, len(s.revokedIn))
	for i, k := range s.revokedIn {
		out[i] = Revocation{ID: s.revoked[k], Key: slices.Clone(k[:])}
	}
	return out
}

// ForgottenKey returns the key most recently revoked with a forget of id,
// so a verifier can tell a removed machine's signature from a stranger's.
func (s *State) ForgottenKey(id string) (ed25519.PublicKey, bool) {
	k, ok := s.forgotten[id]
	if !ok {
		return nil, false
	}
	return slices.Clone(k[:]), true
}

// revoke records key as revoked with a forget of id.
func (s *State) revoke(id string, key keyBytes) {
	s.revoked[key] = id
	s.forgotten[id] = key
	s.revokedIn = append(slices.Clip(s.revokedIn), key)
}

// Settings returns the replicated settings.
func (s *State) Settings() Settings { return s.settings }

// Equal reports whether two states hold the same records (their snapshot
// encodings are canonical, so equal bytes mean equal states).
func (s *State) Equal(o *State) bool {
	return bytes.Equal(EncodeSnapshot(s), EncodeSnapshot(o))
}

// String is a one-line summary for logs (never the keys).
func (s *State) String() string {
	var b strings.Builder
	b.WriteString("fleet{cluster=")
	b.WriteString(s.clusterID)
	for _, m := range s.Members() {
		b.WriteString(" ")
		b.WriteString(m.ID)
		b.WriteString(":")
		b.WriteString(m.Seat.String())
	}
	b.WriteString("}")
	return b.String()
}

// clone copies the indexes so the copy can be edited without touching s.
// Member records are shared until edited; edits replace them (putMember).
func (s *State) clone() *State {
	return &State{
		clusterID: s.clusterID,
		members:   maps.Clone(s.members),
		byRaftID:  maps.Clone(s.byRaftID),
		byKey:     maps.Clone(s.byKey),
		revoked:   maps.Clone(s.revoked),
		revokedIn: s.revokedIn,
		forgotten: maps.Clone(s.forgotten),
		settings:  s.settings,
		voters:    s.voters,
	}
}

// putMember records m (a fresh record owned by s), replacing any record of
// the same id and keeping the indexes and the voter count right.
func (s *State) putMember(m *Member) {
	s.dropMember(m.ID)
	s.members[m.ID] = m
	s.byRaftID[RaftID(m.ID)] = m
	kb, _ := keyOf(m.Key)
	s.byKey[kb] = m
	if m.Seat == Voter {
		s.voters++
	}
}

// dropMember removes the record of id, if any.
func (s *State) dropMember(id string) {
	old, ok := s.members[id]
	if !ok {
		return
	}
	delete(s.members, id)
	delete(s.byRaftID, RaftID(id))
	kb, _ := keyOf(old.Key)
	if s.byKey[kb] == old {
		delete(s.byKey, kb)
	}
	if old.Seat == Voter {
		s.voters--
	}
}
