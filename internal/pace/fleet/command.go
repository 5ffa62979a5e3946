package fleet

import (
	"crypto/ed25519"
	"errors"
	"fmt"

	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// Kind names a command type; it is the second byte of an encoded command.
type Kind uint8

// Command kinds. Numbers are part of the log format: never reuse one.
const (
	KindFound    Kind = 1
	KindAdmit    Kind = 2
	KindForget   Kind = 3
	KindSet      Kind = 4
	KindAnnounce Kind = 5
)

func (k Kind) String() string {
	switch k {
	case KindFound:
		return "found"
	case KindAdmit:
		return "admit"
	case KindForget:
		return "forget"
	case KindSet:
		return "set"
	case KindAnnounce:
		return "announce"
	}
	return fmt.Sprintf("kind-%d", uint8(k))
}

// CommandVersion is the first byte of every encoded command.
const CommandVersion = 1

// MaxCommandLen bounds an encoded command; no valid command comes near it.
const MaxCommandLen = 4096

// ErrMalformed reports bytes that are not a command or snapshot this
// version reads.
var ErrMalformed = errors.New("malformed fleet record")

// Command is one change to the fleet state. The concrete types are Found,
// Admit, Forget, Set and Announce.
type Command interface {
	Kind() Kind
	appendFields(dst []byte) []byte
	fieldCount() int
}

// Found founds the cluster: its id and its first member, a voter.
type Found struct {
	ClusterID    string
	ID           string
	RaftEndpoint string // optional
	NodeEndpoint string // optional
	Key          ed25519.PublicKey
}

// Admit admits a member (Seat Voter: --cluster-admit; Learner:
// --cluster-admit-learner), promotes or demotes one, or records its move.
// Key is optional when the member already has one recorded.
type Admit struct {
	ID           string
	Seat         Seat
	RaftEndpoint string
	Key          ed25519.PublicKey
}

// Forget removes a member and revokes its key in the same entry
// (pace-consensus §7.6). The id is bytes as the operator typed them:
// --cluster-forget is exempt from the UTF-8 check.
type Forget struct {
	ID string
}

// Set sets one replicated setting from its text form.
type Set struct {
	Name  string
	Value string
}

// Announce records endpoints a member announces about itself: its 0xFC
// endpoint, its consensus endpoint after a move, and its scheduler endpoint
// when it leads. Empty fields leave the recorded value. Seq must exceed the
// member's recorded AnnounceSeq, so an older announcement cannot undo a move;
// one that does is recorded even when it changes no endpoint
// (pace-consensus §7.4).
type Announce struct {
	ID                string
	Seq               uint64
	RaftEndpoint      string
	NodeEndpoint      string
	SchedulerEndpoint string
}

func (Found) Kind() Kind    { return KindFound }
func (Admit) Kind() Kind    { return KindAdmit }
func (Forget) Kind() Kind   { return KindForget }
func (Set) Kind() Kind      { return KindSet }
func (Announce) Kind() Kind { return KindAnnounce }

func (Found) fieldCount() int    { return 5 }
func (Admit) fieldCount() int    { return 4 }
func (Forget) fieldCount() int   { return 1 }
func (Set) fieldCount() int      { return 2 }
func (Announce) fieldCount() int { return 5 }

func (c Found) appendFields(dst []byte) []byte {
	dst = wire.AppendStringField(dst, c.ClusterID)
	dst = wire.AppendStringField(dst, c.ID)
	dst = wire.AppendStringField(dst, c.RaftEndpoint)
	dst = wire.AppendStringField(dst, c.NodeEndpoint)
	return wire.AppendField(dst, c.Key)
}

func (c Admit) appendFields(dst []byte) []byte {
	dst = wire.AppendStringField(dst, c.ID)
	dst = wire.AppendU8Field(dst, uint8(c.Seat))
	dst = wire.AppendStringField(dst, c.RaftEndpoint)
	return wire.AppendField(dst, c.Key)
}

func (c Forget) appendFields(dst []byte) []byte { return wire.AppendStringField(dst, c.ID) }

func (c Set) appendFields(dst []byte) []byte {
	return wire.AppendStringField(wire.AppendStringField(dst, c.Name), c.Value)
}

func (c Announce) appendFields(dst []byte) []byte {
	dst = wire.AppendStringField(dst, c.ID)
	dst = wire.AppendU64Field(dst, c.Seq)
	dst = wire.AppendStringField(dst, c.RaftEndpoint)
	dst = wire.AppendStringField(dst, c.NodeEndpoint)
	return wire.AppendStringField(dst, c.SchedulerEndpoint)
}

// EncodeCommand appends the encoding of c to dst: version byte, kind byte,
// then exactly the kind's fields in the 0xFC field grammar.
func EncodeCommand(dst []byte, c Command) []byte {
	dst = append(dst, CommandVersion, byte(c.Kind()))
	return c.appendFields(dst)
}

// DecodeCommand reads one encoded command. It checks the version, the
// kind, the exact field count and every field's width and bound; it does
// not judge the command against a state (Validate does).
func DecodeCommand(b []byte) (Command, error) {
	if len(b) > MaxCommandLen {
		return nil, fmt.Errorf("%w: command of %d bytes exceeds %d", ErrMalformed, len(b), MaxCommandLen)
	}
	if len(b) < 2 {
		return nil, fmt.Errorf("%w: command of %d bytes", ErrMalformed, len(b))
	}
	if b[0] != CommandVersion {
		return nil, fmt.Errorf("%w: command version %d, this build reads %d", ErrMalformed, b[0], CommandVersion)
	}
	var fields [5][]byte
	split := func(n int) ([][]byte, error) {
		f, err := wire.SplitFields(fields[:0], b[2:], n)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrMalformed, Kind(b[1]), err)
		}
		return f, nil
	}
	switch Kind(b[1]) {
	case KindFound:
		return decodeFound(split)
	case KindAdmit:
		return decodeAdmit(split)
	case KindForget:
		return decodeForget(split)
	case KindSet:
		return decodeSet(split)
	case KindAnnounce:
		return decodeAnnounce(split)
	}
	return nil, fmt.Errorf("%w: unknown command kind %d", ErrMalformed, b[1])
}

type splitter func(n int) ([][]byte, error)

func decodeFound(split splitter) (Command, error) {
	f, err := split(Found{}.fieldCount())
	if err != nil {
		return nil, err
	}
	var c Found
	var d decoder
	c.ClusterID = d.text(f[0], ClusterIDLen)
	c.ID = d.text(f[1], MaxIDLen)
	c.RaftEndpoint = d.text(f[2], MaxEndpointLen)
	c.NodeEndpoint = d.text(f[3], MaxEndpointLen)
	c.Key = d.key(f[4], false)
	return c, d.err("found")
}

func decodeAdmit(split splitter) (Command, error) {
	f, err := split(Admit{}.fieldCount())
	if err != nil {
		return nil, err
	}
	var c Admit
	var d decoder
	c.ID = d.text(f[0], MaxIDLen)
	c.Seat = Seat(d.u8(f[1]))
	c.RaftEndpoint = d.text(f[2], MaxEndpointLen)
	c.Key = d.key(f[3], true)
	return c, d.err("admit")
}

func decodeForget(split splitter) (Command, error) {
	f, err := split(Forget{}.fieldCount())
	if err != nil {
		return nil, err
	}
	var d decoder
	c := Forget{ID: string(d.bounded(f[0], MaxIDLen))}
	return c, d.err("forget")
}

func decodeSet(split splitter) (Command, error) {
	f, err := split(Set{}.fieldCount())
	if err != nil {
		return nil, err
	}
	var d decoder
	c := Set{Name: d.text(f[0], MaxSettingValueLen), Value: d.text(f[1], MaxSettingValueLen)}
	return c, d.err("set")
}

func decodeAnnounce(split splitter) (Command, error) {
	f, err := split(Announce{}.fieldCount())
	if err != nil {
		return nil, err
	}
	var c Announce
	var d decoder
	c.ID = d.text(f[0], MaxIDLen)
	c.Seq = d.u64(f[1])
	c.RaftEndpoint = d.text(f[2], MaxEndpointLen)
	c.NodeEndpoint = d.text(f[3], MaxEndpointLen)
	c.SchedulerEndpoint = d.text(f[4], MaxEndpointLen)
	return c, d.err("announce")
}
