package peerlink

import (
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/buildfleet/buildfleet/internal/pace/lease/leasetest"
)

// pace-consensus §7.3.5: each end asks the roster again for every message,
// sent or received, so a key revoked or withdrawn on a live link ends it at
// its next message, on whichever end sees the change.
func TestRevocationEndsTheLinkAtItsNextMessage(t *testing.T) {
	tests := []struct {
		name   string
		change func(r *leasetest.Roster)
	}{
		{"the learner forgotten", func(r *leasetest.Roster) { r.Forget("l1") }},
		{"the learner's key revoked", func(r *leasetest.Roster) { r.Revoke(l1Key.Public()) }},
		{"the learner re-admitted with another key", func(r *leasetest.Roster) { r.Forget("l1").AddLearner("l1", strangerKey.Public()) }},
		{"the voter forgotten", func(r *leasetest.Roster) { r.Forget("v1") }},
		{"the voter's key revoked", func(r *leasetest.Roster) { r.Revoke(v1Key.Public()) }},
	}
	ops := []struct {
		name string
		op   func(l link, pending []byte) error
		role Role
	}{
		{"acceptor receives", func(l link, p []byte) error { _, err := receive(l.acceptor, p); return err }, RoleAcceptor},
		{"acceptor sends", func(l link, _ []byte) error { _, err := l.acceptor.Seal([]byte("x")); return err }, RoleAcceptor},
		{"dialler receives", func(l link, p []byte) error { _, err := receive(l.dialler, p); return err }, RoleDialler},
		{"dialler sends", func(l link, _ []byte) error { _, err := l.dialler.Seal([]byte("x")); return err }, RoleDialler},
	}
	for _, tt := range tests {
		for _, op := range ops {
			t.Run(tt.name+"/"+op.name, func(t *testing.T) {
				l, r := pairOf(t)
				// A frame already in flight each way, sealed before the change.
				pending := send(t, l.dialler, []byte("in flight"))
				if op.role == RoleDialler {
					pending = send(t, l.acceptor, []byte("in flight"))
				}
				tt.change(r)
				err := op.op(l, pending)
				if !errors.Is(err, ErrKeyWithdrawn) {
					t.Fatalf("%v", err)
				}
				name := map[Role]string{RoleAcceptor: "connections_ended_key_withdrawn_total", RoleDialler: "dials_ended_key_withdrawn_total"}[op.role]
				if got := counted(op.role, err); !cmp.Equal(got, want(name)) {
					t.Fatalf("counted %v", got)
				}
			})
		}
	}
}

// A live link whose keys stand is untouched by unrelated changes.
func TestUnrelatedChangesLeaveTheLinkAlone(t *testing.T) {
	l, r := pairOf(t)
	r.Forget("v3").Revoke(strangerKey.Public()).AddLearner("l2", strangerKey.Public())
	if err := l.acceptor.Standing(); err != nil {
		t.Fatal(err)
	}
	if _, err := receive(l.acceptor, send(t, l.dialler, []byte("still"))); err != nil {
		t.Fatal(err)
	}
}

// A member whose own roster does not list it yet (still joining) is judged
// by its peer alone; once listed, its own revocation ends its links too.
func TestOwnRecordIsCheckedOnlyOnceItExists(t *testing.T) {
	acceptorView := newRoster()
	joining := leasetest.NewRoster("c1").AddVoter("v1", v1Key.Public())
	l := accepted(t, member("v1", v1Key, acceptorView, 1), member("l1", l1Key, joining, 2), LearnerToVoter)
	if _, err := l.dialler.Seal([]byte("first")); err != nil {
		t.Fatalf("unlisted dialler: %v", err)
	}
	joining.AddLearner("l1", l1Key.Public()).Forget("l1")
	if _, err := l.dialler.Seal([]byte("second")); !errors.Is(err, ErrKeyWithdrawn) {
		t.Fatalf("forgotten dialler: %v", err)
	}
}

// pace-consensus §7.3.5: a message naming a sender other than the proven
// member ends the link, counted as a sender refusal; a message the check
// cannot read is counted as unreadable. The check sees the proven id.
func TestSenderCheck(t *testing.T) {
	tests := []struct {
		name     string
		verdict  error
		want     error
		acceptor string
		dialler  string
	}{
		{"names the proven member", nil, nil, "", ""},
		{"names another member", fmt.Errorf("message from raft id 42"), ErrFrameSender, "frames_refused_sender_total", "dials_ended_frame_sender_total"},
		{"cannot be read", fmt.Errorf("raftpb: %w", ErrFrameUnreadable), ErrFrameUnreadable, "frames_refused_unreadable_total", "dials_ended_frame_unreadable_total"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var asked []string
			check := func(peer string, msg []byte) error {
				asked = append(asked, peer+":"+string(msg))
				return tt.verdict
			}
			r := newRoster()
			a, d := member("v1", v1Key, r, 1), member("l1", l1Key, r, 2)
			a.CheckSender, d.CheckSender = check, check
			l := accepted(t, a, d, LearnerToVoter)
			_, errA := receive(l.acceptor, send(t, l.dialler, []byte("up")))
			_, errD := receive(l.dialler, send(t, l.acceptor, []byte("down")))
			if !sameErr(errA, tt.want) || !sameErr(errD, tt.want) {
				t.Fatalf("acceptor %v, dialler %v", errA, errD)
			}
			if !cmp.Equal(asked, []string{"l1:up", "v1:down"}) {
				t.Fatalf("asked %v", asked)
			}
			if got := counted(RoleAcceptor, errA); !cmp.Equal(got, want(tt.acceptor)) {
				t.Errorf("acceptor counted %v", got)
			}
			if got := counted(RoleDialler, errD); !cmp.Equal(got, want(tt.dialler)) {
				t.Errorf("dialler counted %v", got)
			}
		})
	}
}

// A frame whose tag fails never reaches the sender check or the roster.
func TestTagIsCheckedFirst(t *testing.T) {
	r := newRoster()
	a := member("v1", v1Key, r, 1)
	a.CheckSender = func(string, []byte) error { t.Fatal("sender check on a forged frame"); return nil }
	l := accepted(t, a, member("l1", l1Key, r, 2), LearnerToVoter)
	b := send(t, l.dialler, []byte("x"))
	b[len(b)-1] ^= 1
	r.Forget("l1")
	if _, err := receive(l.acceptor, b); !errors.Is(err, ErrFrameTag) {
		t.Fatalf("%v", err)
	}
}
