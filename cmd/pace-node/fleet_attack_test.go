package main

import (
	"bufio"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/edkey"
	"github.com/buildfleet/buildfleet/internal/pace/identity"
	"github.com/buildfleet/buildfleet/internal/pace/netlab"
	"github.com/buildfleet/buildfleet/internal/pace/nodeproof"
	"github.com/buildfleet/buildfleet/internal/pace/nodeproof/sealedconn"
	"github.com/buildfleet/buildfleet/internal/pace/peerlink"
	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// linkAttacker plays a consensus link's hostile peer from a namespace of its own, with keys
// taken from copies of members' state directories, against a live leader.
type linkAttacker struct {
	t      *testing.T
	from   *netlab.Host
	leader *machine
	roster keyRoster
}

// keyRoster is the members' keys as their --print-identity lines gave them.
type keyRoster map[string]ed25519.PublicKey

func (r keyRoster) Key(id string) (ed25519.PublicKey, bool, bool) {
	k, ok := r[id]
	return k, false, ok
}

func newLinkAttacker(t *testing.T, from *netlab.Host, leader *machine, members []*machine) *linkAttacker {
	roster := keyRoster{}
	for _, m := range members {
		k, err := edkey.Parse(m.key)
		if err != nil {
			t.Fatal(err)
		}
		roster[m.name] = k
	}
	return &linkAttacker{t: t, from: from, leader: leader, roster: roster}
}

// copiedMember is member m as a copy of its state directory makes it: its id and its key.
func (a *linkAttacker) copiedMember(m *machine) *peerlink.Member {
	a.t.Helper()
	dir := filepath.Join(a.t.TempDir(), "copy")
	if out, err := exec.Command("cp", "-a", m.dir, dir).CombinedOutput(); err != nil {
		a.t.Fatalf("copying %s's state directory: %v\n%s", m.name, err, out)
	}
	id, err := identity.Load(dir, identity.Options{NodeID: m.name})
	if err != nil {
		a.t.Fatalf("loading the copy of %s's identity: %v", m.name, err)
	}
	return &peerlink.Member{ID: m.name, Key: id.Key, Roster: a.roster, Random: rand.Reader}
}

func (a *linkAttacker) dialLeader() net.Conn {
	a.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	raw, err := a.from.DialContext(ctx, "tcp", a.leader.raftAddr())
	if err != nil {
		a.t.Fatalf("dialling the leader's consensus port: %v", err)
	}
	raw.SetDeadline(time.Now().Add(10 * time.Second))
	return raw
}

// handshake dials the leader as member and runs the whole handshake, returning the session,
// the connection, and the proof as it went on the wire.
func (a *linkAttacker) handshake(member *peerlink.Member, target string, dir peerlink.Direction) (*peerlink.Session, net.Conn, *bufio.Reader, []byte, error) {
	raw := a.dialLeader()
	br := bufio.NewReader(raw)
	h, err := member.Dial(target, dir)
	if err != nil {
		a.t.Fatal(err)
	}
	challenge, err := readLinkFrame(br)
	if err != nil {
		return nil, raw, br, nil, fmt.Errorf("reading the challenge: %w", err)
	}
	proof, err := h.Prove(challenge)
	if err != nil {
		a.t.Fatal(err)
	}
	if _, err := raw.Write(proof); err != nil {
		return nil, raw, br, proof, err
	}
	verdict, err := readLinkFrame(br)
	if err != nil {
		return nil, raw, br, proof, fmt.Errorf("reading the verdict: %w", err)
	}
	s, err := h.Check(verdict)
	return s, raw, br, proof, err
}

// refusedWith checks that the leader's count of series rose past before within a few tries
// of attack, each on a new connection (a real member's redial can supersede an attacking
// session before its frame is read, so one try may be spent on nothing).
func (a *linkAttacker) refusedWith(series string, attack func() error) {
	a.t.Helper()
	before := a.leader.metric(series)
	for try := 0; try < 5; try++ {
		if err := attack(); err != nil {
			a.t.Fatalf("%s: %v", series, err)
		}
		deadline := time.Now().Add(3 * time.Second)
		for time.Now().Before(deadline) {
			if a.leader.metric(series) > before {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	a.t.Fatalf("the leader's %s stayed at %v", series, before)
}

// closedWithoutVerdict checks that the leader closed the connection without a frame.
func closedWithoutVerdict(br *bufio.Reader) error {
	frame, err := readLinkFrame(br)
	switch {
	case err == nil:
		return fmt.Errorf("the leader answered with a %d-byte frame", len(frame))
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, net.ErrClosed):
		return nil
	}
	var ne net.Error
	if errors.As(err, &ne) && !ne.Timeout() {
		return nil // a reset
	}
	return fmt.Errorf("the leader neither answered nor closed: %w", err)
}

// readLinkFrame reads one whole frame, header to tag.
func readLinkFrame(br *bufio.Reader) ([]byte, error) {
	hdr := make([]byte, peerlink.HeaderLen)
	if _, err := io.ReadFull(br, hdr); err != nil {
		return nil, err
	}
	h, err := peerlink.ParseHeader(hdr, 0)
	if err != nil {
		return nil, err
	}
	n := int(h.Len)
	if h.Kind == peerlink.KindMessage {
		n += peerlink.TagLen
	}
	frame := append(hdr, make([]byte, n)...)
	_, err = io.ReadFull(br, frame[peerlink.HeaderLen:])
	return frame, err
}

// attackTheLink plays each refusal the consensus link names at a live leader from the
// intruder's namespace, and checks the leader counted each under its own name.
func attackTheLink(t *testing.T, a *linkAttacker, learner, otherVoter *machine) {
	t.Run("a copied state directory is refused as own-id", func(t *testing.T) {
		twin := a.copiedMember(a.leader)
		a.refusedWith("pace_raft_peer_connections_refused_own_id_total", func() error {
			_, raw, _, _, err := a.handshake(twin, a.leader.name, peerlink.VoterToVoter)
			raw.Close()
			if !errors.Is(err, peerlink.ErrOwnID) {
				return fmt.Errorf("want an own-id verdict, got %v", err)
			}
			return nil
		})
	})
	member := a.copiedMember(learner)
	t.Run("a dial meant for another member is refused as wrong-target", func(t *testing.T) {
		a.refusedWith("pace_raft_peer_connections_refused_wrong_target_total", func() error {
			_, raw, _, _, err := a.handshake(member, otherVoter.name, peerlink.LearnerToVoter)
			raw.Close()
			if !errors.Is(err, peerlink.ErrWrongTarget) {
				return fmt.Errorf("want a wrong-target verdict, got %v", err)
			}
			return nil
		})
	})
	t.Run("a replayed proof is closed without a verdict", func(t *testing.T) {
		_, raw, _, proof, err := a.handshake(member, a.leader.name, peerlink.LearnerToVoter)
		raw.Close()
		if err != nil {
			t.Fatalf("the genuine handshake: %v", err)
		}
		a.refusedWith("pace_raft_peer_connections_refused_proof_total", func() error {
			raw := a.dialLeader()
			defer raw.Close()
			br := bufio.NewReader(raw)
			if _, err := readLinkFrame(br); err != nil {
				return err
			}
			if _, err := raw.Write(proof); err != nil {
				return err
			}
			return closedWithoutVerdict(br)
		})
	})
	t.Run("a tampered message ends the link", func(t *testing.T) {
		a.refusedWith("pace_raft_peer_frames_refused_tag_total", func() error {
			s, raw, _, _, err := a.handshake(member, a.leader.name, peerlink.LearnerToVoter)
			defer raw.Close()
			if err != nil {
				return err
			}
			f, err := s.Seal([]byte("a raft message"))
			if err != nil {
				return err
			}
			wireBytes := f.Append(nil)
			wireBytes[peerlink.HeaderLen] ^= 1
			_, err = raw.Write(wireBytes)
			return err
		})
	})
	t.Run("a message reflected back to the leader ends the link", func(t *testing.T) {
		a.refusedWith("pace_raft_peer_frames_refused_tag_total", func() error {
			_, raw, br, _, err := a.handshake(member, a.leader.name, peerlink.LearnerToVoter)
			defer raw.Close()
			if err != nil {
				return err
			}
			heard, err := readLinkFrame(br)
			if err != nil {
				return nil // superseded by the real member's redial before the leader spoke
			}
			_, err = raw.Write(heard)
			return err
		})
	})
}

// provenSession opens a proven, sealed node-port session to the leader as member m (a copy of
// its state directory) from the attacker's namespace, and checks it is answered.
func (a *linkAttacker) provenSession(m *machine) *sealedconn.Conn {
	a.t.Helper()
	member := a.copiedMember(m)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	raw, err := a.from.DialContext(ctx, "tcp", a.leader.addr())
	if err != nil {
		a.t.Fatal(err)
	}
	conn, err := sealedconn.Client(ctx, raw, sealedconn.Config{Prover: &nodeproof.Client{
		ID: member.ID, Key: member.Key, Random: rand.Reader}})
	if err != nil {
		a.t.Fatalf("proving %s's key to the leader: %v", m.name, err)
	}
	if _, _, err := conn.Do(ctx, wire.OpClusterStatus); err != nil {
		a.t.Fatalf("CLUSTER-STATUS on %s's proven session: %v", m.name, err)
	}
	return conn
}
