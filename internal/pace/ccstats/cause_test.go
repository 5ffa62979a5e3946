package ccstats

import (
	"strings"
	"testing"
	"unicode"

	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// TestNormalizeCauseReadsOldMessages: the free text builds before the vocabulary recorded,
// addresses and all, folds to the cause it described.
func TestNormalizeCauseReadsOldMessages(t *testing.T) {
	for _, tc := range []struct {
		raw  string
		want Cause
	}{
		{"dispatched", CauseDispatched},
		{"not-dispatched:no-scheduler", CauseNoScheduler},
		{"refused:no-capacity", "refused:no-capacity"},
		{"not dispatchable: debug information records columns that preprocessing moves", CauseDebugColumns},
		{"not dispatchable: not dispatchable: argument refused: -fplugin=x.so", CauseArguments},
		{"not dispatchable: language not dispatchable", CauseArguments},
		{"no toolchain fingerprint: exec: \"gcc\": not found", CauseNoFingerprint},
		{"preprocessing src/a.c for dispatch: exit status 1", CausePreprocessFailed},
		{"preprocessing src/a.c: exit status 1", CauseOther},
		{"scheduler 10.0.0.5:6674 refused: no-worker", "refused:no-worker"},
		{"scheduler [fe80::1%eth0]:6674 refused: not-a-member", "refused:not-a-member"},
		{"scheduler 10.0.0.5:6674 refused: code-0xee", "refused:unrecognised"},
		{"scheduler 10.0.0.5:6674 refused: canonicalization-failed", "refused:unrecognised"}, // retired
		{"scheduler 10.0.0.5:6674: LEASE to 10.0.0.5:6674: refused ticket-refused: expired", "refused:ticket-refused"},
		{"scheduler 127.0.0.1:1: dialling 127.0.0.1:1: dial tcp 127.0.0.1:1: connect: connection refused", CauseSchedulerUnreachable},
		{"scheduler 10.0.0.5:6674: read reply header: read tcp 10.0.0.2:40000->10.0.0.5:6674: i/o timeout", CauseSchedulerError},
		{"crossed reply", CauseCrossedReply},
		{"no worker address reachable: dialling 10.0.0.7:6674: connect: no route to host", CauseWorkerUnreachable},
		{"worker 10.0.0.7:6674: refused not-a-member: this caller is not admitted to this surface", "worker-refused:not-a-member"},
		{"worker 10.0.0.7:6674: refused lease-expired: the lease has expired", "worker-refused:lease-expired"},
		{"worker 10.0.0.7:6674: refused code-0xfe", "worker-refused:unrecognised"},
		{"worker w7.example:6674: compile reply unauthenticated: the signature does not verify under the granted worker's key", CauseReplyUnverified},
		{"worker 10.0.0.7:6674: read reply header: read tcp 10.0.0.2:5555->10.0.0.7:6674: i/o timeout", CauseWorkerTimeout},
		{"worker 10.0.0.7:6674: read reply header: EOF", CauseWorkerError},
		{"worker 10.0.0.7:6674: the compiler exited 1", CauseRemoteFailed},
		{"worker 10.0.0.7:6674: the compile printed diagnostics", CauseRemoteDiagnostics},
		{"landing the object from 10.0.0.7:6674: open a.o: permission denied", CauseLandingFailed},
		{"sending to worker 10.0.0.7:6674: broken pipe", CauseWorkerError},
		{"a message from the future 10.1.1.1:99", CauseOther},
		{"", CauseOther},
	} {
		if got := NormalizeCause(tc.raw); got != tc.want {
			t.Errorf("NormalizeCause(%q) = %q, want %q", tc.raw, got, tc.want)
		}
	}
}

// TestVocabularyNamesNoMachine: no cause can hold an address, a port or an id, every one has
// a line of advice, and the vocabulary is bounded by the code table.
func TestVocabularyNamesNoMachine(t *testing.T) {
	causes := Causes()
	if want := len(fixedCauses) + 2*(len(wire.LiveCodes())+1); len(causes) != want {
		t.Fatalf("%d causes, want %d", len(causes), want)
	}
	for _, c := range causes {
		if strings.IndexFunc(string(c), func(r rune) bool {
			return !(unicode.IsLower(r) || r == '-' || r == ':')
		}) >= 0 {
			t.Errorf("cause %q holds more than lower-case words", c)
		}
		if Advice(c) == "" {
			t.Errorf("cause %q has no advice", c)
		}
		if NormalizeCause(string(c)) != c {
			t.Errorf("cause %q does not normalise to itself", c)
		}
	}
}

func TestRefusalCauses(t *testing.T) {
	for _, tc := range []struct {
		got, want Cause
	}{
		{SchedulerRefused(wire.CodeNoWorker), "refused:no-worker"},
		{SchedulerRefused(wire.CodeNotLeader), "refused:not-leader"},
		{SchedulerRefused(wire.Code(0xee)), "refused:unrecognised"},
		{SchedulerRefused(wire.Code(0x06)), "refused:unrecognised"}, // retired, never sent
		{WorkerRefused(wire.CodeNotAMember), "worker-refused:not-a-member"},
		{WorkerRefused(wire.CodeLeaseExpired), "worker-refused:lease-expired"},
		{WorkerRefused(wire.Code(0)), "worker-refused:unrecognised"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
	if a := Advice("worker-refused:not-a-member"); !strings.Contains(a, "--fleet-open") {
		t.Errorf("worker not-a-member advice %q does not name --fleet-open", a)
	}
	if a := Advice("refused:request-deadline-exceeded"); !strings.Contains(a, "PACE_VERBOSE") {
		t.Errorf("generic scheduler advice %q", a)
	}
}
