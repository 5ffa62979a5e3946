package worker

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/buildfleet/buildfleet/internal/pace/argvet"
	"github.com/buildfleet/buildfleet/internal/pace/frameserver"
	"github.com/buildfleet/buildfleet/internal/pace/lease"
	"github.com/buildfleet/buildfleet/internal/pace/verbs"
	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// Progresser sends a Progress frame to the client now; *frameserver.Conn
// is one. An error means the client can no longer be written to.
type Progresser interface {
	Progress() error
}

// Serve answers one COMPILE whose caller the node already admitted
// (pace-node §5.3 step 1 is the node's, counted in RefusedNotAMember). It
// blocks on the connection's own goroutine while the compile runs, so every
// admitted compile has its own goroutine and the accept loop never waits. The
// reply's Release must run once the reply is written (the frameserver does
// this): the byte charge and the slot are held until then.
func (w *Worker) Serve(ctx context.Context, c *frameserver.Conn, req *frameserver.Request) frameserver.Reply {
	return w.Compile(ctx, c, uint32(req.PayloadLen()), req.Fields)
}

// CheckFrame is step 2 of pace-node §5.3 decided from the frame header alone,
// for a listener that can ask before it reads the payload: a frame above the
// request ceiling is payload-too-large
// (`pace_worker_frames_refused_payload_too_large_total`), one that does not fit
// in what is left of the budget is endpoint-busy. It charges nothing; Serve
// checks again and charges.
func (w *Worker) CheckFrame(frameLen uint32) error {
	if uint64(frameLen) > w.ceiling {
		return w.frameTooLarge(frameLen)
	}
	if used := w.budget.inUse(); uint64(frameLen) > w.cfg.Budget-used {
		return w.busy(uint64(frameLen))
	}
	return nil
}

// Compile runs the pipeline for one admitted COMPILE of frameLen payload
// bytes split into fields; p receives the Progress frames (nil sends none).
func (w *Worker) Compile(ctx context.Context, p Progresser, frameLen uint32, fields [][]byte) frameserver.Reply {
	w.counters.BytesReceived.Add(uint64(frameLen))
	j := &job{w: w, charge: charge{b: w.budget}}
	payload, err := j.run(ctx, p, frameLen, fields)
	var reply frameserver.Reply
	if err != nil {
		reply = frameserver.Refuse(asRefusal(err))
		reply.Close = j.gone.Load()
	} else {
		reply = frameserver.Ok(payload)
		w.counters.BytesReturned.Add(uint64(len(payload)))
	}
	reply.Release = j.release
	return reply
}

// job is one COMPILE from admission until its reply is written.
type job struct {
	w         *Worker
	charge    charge
	slot      bool
	ctx       context.Context
	cancel    context.CancelFunc
	desc      string      // names the compile when Stop abandons it
	gone      atomic.Bool // the client went away
	abandoned atomic.Bool // Stop gave up waiting for it
}

// run is pace-node §5.3 steps 2–12, in that order (10b: a bundle's screen).
func (j *job) run(ctx context.Context, p Progresser, frameLen uint32, fields [][]byte) ([]byte, error) {
	w := j.w
	if err := j.admitFrame(frameLen); err != nil {
		return nil, err
	}
	req, err := w.parse(fields)
	if err != nil {
		return nil, err
	}
	key, err := w.verifyLease(&req)
	if err != nil {
		return nil, err
	}
	if err := w.checkState(); err != nil {
		return nil, err
	}
	if err := j.chargeEnvelope(req.Source, frameLen); err != nil {
		return nil, err
	}
	if err := j.enter(ctx, &req, key); err != nil {
		return nil, err
	}
	tc, err := w.resolveToolchain(req.Fingerprint)
	if err != nil {
		return nil, err
	}
	source, err := w.open(req.Source)
	if err != nil {
		return nil, err
	}
	if err := w.vet(tc, req.Args); err != nil {
		return nil, err
	}
	b, err := w.bundle(tc, source)
	if err != nil {
		return nil, err
	}
	return j.compile(p, &req, tc, source, b)
}

// refuse counts a refusal in its counter and returns it.
func refuse(counter *atomic.Uint64, code wire.Code, format string, args ...any) error {
	counter.Add(1)
	return wire.Refuse(code, format, args...)
}

func asRefusal(err error) wire.Refusal {
	var r wire.Refusal
	if errors.As(err, &r) {
		return r
	}
	return wire.Refusal{Code: wire.CodeWorkerSpawnFailed, Message: err.Error()}
}

// admitFrame is step 2: the frame ceiling, then the frame's charge.
func (j *job) admitFrame(frameLen uint32) error {
	if uint64(frameLen) > j.w.ceiling {
		return j.w.frameTooLarge(frameLen)
	}
	if !j.charge.to(uint64(frameLen)) {
		return j.w.busy(uint64(frameLen))
	}
	return nil
}

func (w *Worker) frameTooLarge(frameLen uint32) error {
	return refuse(&w.counters.FramesRefusedPayloadTooLarge, wire.CodePayloadTooLarge,
		"a COMPILE frame of %d bytes is above this worker's request ceiling of %d bytes", frameLen, w.ceiling)
}

func (w *Worker) busy(want uint64) error {
	return refuse(&w.counters.RefusedEndpointBusy, wire.CodeEndpointBusy,
		"this worker's in-flight byte budget of %d bytes cannot hold a request charged %d bytes now; try again shortly",
		w.cfg.Budget, want)
}

// parse is step 3.
func (w *Worker) parse(fields [][]byte) (verbs.CompileRequest, error) {
	req, err := verbs.ParseCompile(fields)
	if err == nil {
		return req, nil
	}
	w.counters.FramesRefusedMalformedPayload.Add(1)
	if r, ok := verbs.RefusalOf(err); ok {
		return req, r
	}
	return req, wire.Refuse(wire.CodeMalformedFrame, "%v", err)
}

// verifyLease is step 4, before anything is decompressed. It returns the
// granted object key.
func (w *Worker) verifyLease(req *verbs.CompileRequest) (string, error) {
	if !w.cfg.VerifyLeases {
		return "", nil
	}
	claims, r := w.verifier.Verify(req.LeaseToken, lease.Context{
		Roster:             w.cfg.Leases.Roster(),
		LeaderHeardAt:      w.cfg.Leases.LeaderHeardAt(),
		Endpoint:           w.cfg.Endpoint(),
		MovedFrom:          w.cfg.MovedFrom,
		RequestFingerprint: req.Fingerprint,
		Serves:             w.servesForLease,
		Now:                w.cfg.Now(),
	})
	if r != nil {
		w.counters.countLease(r.Reason)
		return "", r.Wire()
	}
	return claims.Key, nil
}

// servesForLease answers the lease check's "fingerprint served" question.
// Before the first survey ends nobody can know; the survey-in-flight
// refusal that follows says so instead of a false fingerprint-mismatch.
func (w *Worker) servesForLease(fp string) bool {
	if !w.Surveyed() {
		return true
	}
	_, ok := w.toolchains.Load().lookup(fp)
	return ok
}

// checkState is step 5.
func (w *Worker) checkState() error {
	switch {
	case w.isStopping():
		return refuse(&w.counters.RefusedStopping, wire.CodeNoCapacity, "this worker is stopping")
	case w.cordoned.Load():
		return refuse(&w.counters.RefusedCordoned, wire.CodeNoCapacity, "this worker is cordoned by its operator")
	case !w.Surveyed():
		return refuse(&w.counters.RefusedSurveyInFlight, wire.CodeWorkerToolchainSurveyPending, "")
	}
	return nil
}

// chargeEnvelope is step 6: the envelope header is parsed, never opened;
// a declared expansion above the ceiling is refused before anything is
// allocated for it, and the charge grows to max(frameLen, rawLen).
func (j *job) chargeEnvelope(source []byte, frameLen uint32) error {
	w := j.w
	env, err := wire.ParseEnvelope(source)
	if err != nil {
		return refuse(&w.counters.EnvelopeMalformed, wire.CodeMalformedFrame, "source envelope: %v", err)
	}
	if uint64(env.RawLen) > w.ceiling {
		return refuse(&w.counters.EnvelopeDeclaredTooLarge, wire.CodePayloadTooLarge,
			"the source envelope declares %d bytes; this worker's request ceiling is %d bytes", env.RawLen, w.ceiling)
	}
	if want := max(uint64(frameLen), uint64(env.RawLen)); !j.charge.to(want) {
		return w.busy(want)
	}
	return nil
}

// enter is step 7: a slot, taken without waiting, and the job's place in
// the running set Stop waits on.
func (j *job) enter(ctx context.Context, req *verbs.CompileRequest, key string) error {
	w := j.w
	if !w.slots.tryAcquire() {
		return refuse(&w.counters.RefusedNoSlot, wire.CodeNoCapacity, "all %d compile slots of this worker are busy", w.cfg.Slots)
	}
	j.slot = true
	j.ctx, j.cancel = context.WithCancel(ctx)
	j.desc = describe(req, key)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopping { // Stop began since step 5; it must see every job it lets run
		return refuse(&w.counters.RefusedStopping, wire.CodeNoCapacity, "this worker is stopping")
	}
	w.running[j] = struct{}{}
	return nil
}

func describe(req *verbs.CompileRequest, key string) string {
	d := argvet.SanitizeArg(req.SourceName)
	if key != "" {
		d += " (key " + argvet.SanitizeArg(key) + ")"
	}
	return d
}

// resolveToolchain is step 8: the job names a fingerprint; the compiler is
// the worker's own.
func (w *Worker) resolveToolchain(fp string) (Toolchain, error) {
	tc, ok := w.toolchains.Load().lookup(fp)
	if !ok {
		return tc, refuse(&w.counters.RefusedUnknownFingerprint, wire.CodeFingerprintMismatch,
			"this worker does not serve toolchain %s", argvet.SanitizeArg(fp))
	}
	return tc, nil
}

// open is step 9: each envelope refusal counted apart.
func (w *Worker) open(field []byte) ([]byte, error) {
	src, err := wire.Open(field, uint32(w.ceiling), wire.SupportedCodecs)
	c := &w.counters
	switch {
	case err == nil:
		return src, nil
	case errors.Is(err, wire.ErrUnsupportedCodec):
		return nil, refuse(&c.EnvelopeUnsupportedCodec, wire.CodeUnsupportedCodec,
			"the source envelope's codec %s cannot be decoded by this worker", wire.Codec(field[0]))
	case errors.Is(err, wire.ErrCorruptEnvelope):
		return nil, refuse(&c.EnvelopeCorrupt, wire.CodeMalformedFrame, "the source envelope's bytes do not expand to its declared size")
	case errors.Is(err, wire.ErrPayloadTooLarge):
		return nil, refuse(&c.EnvelopeDeclaredTooLarge, wire.CodePayloadTooLarge, "the source envelope declares more than the request ceiling")
	}
	return nil, refuse(&c.EnvelopeMalformed, wire.CodeMalformedFrame, "source envelope: %v", err)
}

// vet is step 10: the allowlist of the toolchain's driver family, with
// the operator's extensions; the worker re-checks whatever the client did.
func (w *Worker) vet(tc Toolchain, args []string) error {
	if tc.Flavor.Family() != argvet.FamilyGNU {
		w.cfg.Logger.Warn("worker: toolchain's driver cannot be classified as gcc or clang", "path", tc.Path, "label", tc.Label)
		return refuse(&w.counters.RefusedCompilerUnclassified, wire.CodeWorkerCompilerUnclassified,
			"this worker cannot classify the compiler of toolchain %s", tc.Label)
	}
	err := w.policy.Load().Vet(tc.Flavor, args)
	if err == nil {
		return nil
	}
	var re *argvet.RejectedError
	if errors.As(err, &re) {
		return refuse(&w.counters.RefusedRejectedArgument, wire.CodeWorkerRejectedArgument,
			"argument %q is not accepted by this worker (%s)", re.Arg, re.Rule)
	}
	return refuse(&w.counters.RefusedRejectedArgument, wire.CodeWorkerRejectedArgument, "%s", fmt.Sprint(err))
}
