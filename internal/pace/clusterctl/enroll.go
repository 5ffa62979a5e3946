package clusterctl

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/edkey"
	"github.com/buildfleet/buildfleet/internal/pace/verbs"
	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// The enrollment verbs (pace-node §9.3): ENROLL-CONTROL to the leader, each answered with the
// list as it stands after the verb.

// EnrollList is --enroll-list.
func EnrollList() Verb { return enrollVerb(verbs.EnrollControl{Verb: verbs.EnrollList}) }

// EnrollClear is --enroll-clear.
func EnrollClear() Verb { return enrollVerb(verbs.EnrollControl{Verb: verbs.EnrollClear}) }

// EnrollReject is --enroll-reject=<id>.
func EnrollReject(id string) (Verb, error) {
	if id == "" {
		return Verb{}, errors.New("--enroll-reject needs the id of a machine asking to join")
	}
	return enrollVerb(verbs.EnrollControl{Verb: verbs.EnrollReject, ID: id}), nil
}

// EnrollApprove is --enroll-approve=<id>@<key>: the key is required, and must be the one the
// machine asked with, so an approval names exactly one machine.
func EnrollApprove(operand string) (Verb, error) {
	id, keyText, ok := strings.Cut(operand, "@")
	if !ok || id == "" {
		return Verb{}, fmt.Errorf("--enroll-approve=%q: want <id>@<key> (--enroll-list shows both)", operand)
	}
	key, err := edkey.Parse(keyText)
	if err != nil {
		return Verb{}, fmt.Errorf("--enroll-approve=%q: the key: %w", operand, err)
	}
	return enrollVerb(verbs.EnrollControl{Verb: verbs.EnrollApprove, ID: id, Key: key}), nil
}

// EnrollAutoApprove is --enroll-auto-approve=<duration>|off.
func EnrollAutoApprove(operand string) (Verb, error) {
	if operand == "off" {
		return enrollVerb(verbs.EnrollControl{Verb: verbs.EnrollAutoOff}), nil
	}
	d, err := time.ParseDuration(operand)
	if err != nil || d < time.Second || d > verbs.MaxAutoApproveSeconds*time.Second {
		return Verb{}, fmt.Errorf("--enroll-auto-approve=%q: want a duration from 1s to 24h, or off", operand)
	}
	return enrollVerb(verbs.EnrollControl{Verb: verbs.EnrollAutoApprove, Seconds: uint64(d / time.Second)}), nil
}

func enrollVerb(c verbs.EnrollControl) Verb {
	f, _ := wire.SplitFields(nil, c.Append(nil), 2)
	return Verb{Op: wire.OpEnrollControl, Fields: f}
}

var decisions = map[uint8]string{verbs.RowPending: "waiting", verbs.RowApproved: "approved", verbs.RowRejected: "rejected"}

// printEnrollment prints ENROLL-CONTROL's answer as a table, with the line that approves each
// waiting machine.
func printEnrollment(w io.Writer, a Answer) error {
	l, err := verbs.ParseEnrollmentList(a.Body)
	if err != nil {
		return fmt.Errorf("the answer from %s: %w", a.From, err)
	}
	state := "enrollment: manual (each machine needs --enroll-approve)"
	if l.State == verbs.EnrollStateAuto {
		state = fmt.Sprintf("enrollment: AUTOMATIC WINDOW OPEN for %s more: every machine asking is admitted as a learner", time.Duration(l.SecondsLeft)*time.Second)
	}
	fmt.Fprintf(w, "%s (leader %s)\n", state, a.From)
	if len(l.Rows) == 0 {
		_, err := fmt.Fprintln(w, "no machine is asking to join")
		return err
	}
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTATE\tENDPOINT\tHOST\tASKED\tPOLLS\tKEY")
	for _, r := range l.Rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s ago\t%d\t%s\n", r.ID, decisions[r.Decision], r.Endpoint, r.PeerHost,
			time.Duration(r.FirstSeenAgo)*time.Second, r.Attempts, edkey.Text(r.Key))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, r := range l.Rows {
		if r.Decision == verbs.RowPending {
			fmt.Fprintf(w, "approve %s with: pace-node --scheduler=%s --enroll-approve=%s@%s\n", r.ID, a.From, r.ID, edkey.Text(r.Key))
		}
	}
	return nil
}
