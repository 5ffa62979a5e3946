package worker_test

import (
	"testing"

	"github.com/buildfleet/buildfleet/internal/gradient/wire"
)

// gradient-server §13.4: a Credential belongs to the AssignJob right after it. When that job
// is declined, the key goes with it: the next job (here a public repository, for which a
// credential would be refused) runs without it.
func TestADeclinedJobsCredentialDoesNotReachTheNextJob(t *testing.T) {
	f := newFixture(t, nil)
	ss := f.start()
	f.startSleeper(ss)
	ss.SendCredential([]byte("-----BEGIN OPENSSH PRIVATE KEY-----\nnot for the next job\n"))
	ss.Assign("build:2", f.buildJob(f.evaluate("tests.*")["fail"], 0, 0))
	if _, err := ss.Wait(f.ctx, func(m wire.ClientMessage) bool {
		r, ok := m.(*wire.AssignJobResponse)
		return ok && r.JobID == "build:2" && !r.Accepted
	}); err != nil {
		t.Fatal(err)
	}
	ss.Assign("eval:3", f.flakeJob("packages.*.a"))
	if end := f.waitEnd(ss, "eval:3"); !isCompleted(end) {
		t.Fatalf("the next job ended with %+v", end)
	}
	ss.Abort("build:sleeper", "test over")
	f.waitEnd(ss, "build:sleeper")
}

func isCompleted(m wire.ClientMessage) bool {
	_, ok := m.(*wire.JobCompleted)
	return ok
}
