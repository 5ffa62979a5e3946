package cc

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/cachekey"
	"github.com/buildfleet/buildfleet/internal/pace/ccargs"
	"github.com/buildfleet/buildfleet/internal/pace/ccstats"
	"github.com/buildfleet/buildfleet/internal/pace/lease"
	"github.com/buildfleet/buildfleet/internal/pace/machineticket"
	"github.com/buildfleet/buildfleet/internal/pace/toolchain"
	"github.com/buildfleet/buildfleet/internal/pace/verbs"
	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// maxRedirects is how many not-leader answers a LEASE follows (pace-wire §3.9.2 step 1).
const maxRedirects = 2

// clientCodecs are what pace-cc can produce and decode, most preferred first.
var clientCodecs = wire.NewCodecList(wire.CodecZstd, wire.CodecLZ4)

// dispatch compiles on the worker the scheduler names (pace-wire §3.9). ok is false whenever
// the compile must happen here instead: every refusal, an unreachable worker, a reply that is
// not this request's or is not signed by the granted worker, a non-zero exit, or diagnostics
// that cannot be replayed exactly (a local compile prints them with the right paths). The
// lease is released on every path.
func (r *run) dispatch(ctx context.Context, key cachekey.Digest, pp probed) (captured, bool) {
	args, err := r.comp.RemoteCompileArgs(r.id.Target)
	if err != nil {
		return r.noDispatch(argumentsCause(err), "%v", err)
	}
	if r.comp.RemoteMode() == ccargs.RemoteDirectives && r.comp.Debug.Level > 0 && r.comp.Debug.DWARF == 0 && defaultDWARF(r.id) < 5 {
		return r.noDispatch(ccstats.CauseDebugInfo, "not dispatchable: this gcc writes DWARF before 5 by default; -gdwarf-5 would dispatch")
	}
	fp, err := toolchain.Fingerprint(ctx, r.id, r.stateDir("compilers"))
	if err != nil {
		return r.noDispatch(ccstats.CauseNoFingerprint, "no toolchain fingerprint: %v", err)
	}
	src, cause, err := r.remoteSourceFor(ctx, pp)
	if err != nil {
		return r.noDispatch(cause, "not dispatchable: %v", err)
	}
	grant, scheduler, err := r.lease(ctx, fp, key)
	if err != nil {
		return r.noDispatch(schedulerCause(err), "%v", err)
	}
	defer r.release(ctx, scheduler, grant.Token, key)
	req := verbs.CompileRequest{LeaseToken: grant.Token, Fingerprint: fp, Args: args, Codecs: clientCodecs,
		SourceName: r.comp.Source, CompileDir: r.cwd, CompileDirReplacement: r.cwd}
	if src.built != nil {
		req.CompileDirReplacement = r.comp.DebugName(r.cwd) // DW_AT_comp_dir after the command's maps
	}
	reply, err := r.remoteCompile(ctx, grant, req, src.text)
	if err != nil {
		return r.noDispatch(workerCause(err), "%v", err)
	}
	return r.landRemote(grant, reply, pp, src)
}

// noDispatch records cause, which the statistics group by, and says why in the verbose line,
// which may name machines.
func (r *run) noDispatch(cause ccstats.Cause, format string, a ...any) (captured, bool) {
	r.rec.Dispatch = cause
	r.verbosef("not dispatched (%s): compiling here", fmt.Sprintf(format, a...))
	return captured{}, false
}

// lease asks the scheduler for a worker, following not-leader at most twice.
func (r *run) lease(ctx context.Context, fp string, key cachekey.Digest) (verbs.LeaseGrant, string, error) {
	req := verbs.LeaseRequest{Fingerprint: fp, Key: key.Hex(), Codecs: clientCodecs, ToolchainLabel: label(r.id)}
	addr := r.cfg.Scheduler
	for hop := 0; ; hop++ {
		_, payload, err := r.exchange(ctx, addr, wire.OpLease, req.Append(nil))
		var ref wire.Refusal
		switch {
		case err == nil:
			grant, perr := verbs.ParseLeaseGrant(payload)
			return grant, addr, perr
		case errors.As(err, &ref) && ref.Code == wire.CodeNotLeader && ref.Message != "" && hop < maxRedirects:
			addr = ref.Message
		case errors.As(err, &ref):
			return verbs.LeaseGrant{}, "", fmt.Errorf("scheduler %s: %w", addr, ref)
		default:
			return verbs.LeaseGrant{}, "", fmt.Errorf("scheduler %s: %w", addr, err)
		}
	}
}

// release hands the lease back on its own connection; its failure is ignored (expiry is the
// safety net).
func (r *run) release(ctx context.Context, scheduler, token string, key cachekey.Digest) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	_, _, _ = r.exchange(ctx, scheduler, wire.OpRelease, verbs.ReleaseRequest{Token: token, Key: key.Hex()}.Append(nil))
}

func label(id toolchain.Identity) string {
	if len(id.Banner) > verbs.MaxLabel {
		return id.Banner[:verbs.MaxLabel]
	}
	return id.Banner
}

// remoteCompile sends the preprocessed source to the granted worker (its dial hint first) and
// reads the reply within the grant's lifetime and the idle bound.
func (r *run) remoteCompile(ctx context.Context, g verbs.LeaseGrant, req verbs.CompileRequest, source []byte) (verbs.CompileReply, error) {
	env, err := wire.Seal(nil, wire.ChooseCodec(g.WorkerCodecs, wire.SupportedCodecs), source)
	if err != nil {
		return verbs.CompileReply{}, err
	}
	req.Source = env
	budget := time.Duration(g.LifetimeMs) * time.Millisecond
	if budget == 0 {
		budget = r.cfg.DispatchTimeout
	}
	reply, err := r.compileAt(ctx, g, req, budget)
	if err != nil {
		return reply, err
	}
	if want := req.Correlation(source); reply.Correlation != want {
		fmt.Fprintf(r.stderr, "pace-cc: crossed reply from worker %s (correlation %s, expected %s): compiling here\n", g.Endpoint, reply.Correlation, want)
		return reply, errCrossedReply
	}
	if err := lease.VerifyReply(g.WorkerKey, reply.Correlation, reply.Object, reply.Signature); err != nil {
		return reply, fmt.Errorf("worker %s: %w", g.Endpoint, err)
	}
	return reply, nil
}

func (r *run) compileAt(ctx context.Context, g verbs.LeaseGrant, req verbs.CompileRequest, budget time.Duration) (verbs.CompileReply, error) {
	var lastErr error
	for _, addr := range []string{g.DialHint, g.Endpoint} {
		if addr == "" {
			continue
		}
		nc, err := r.dial(ctx, addr)
		if err != nil {
			lastErr = err
			continue
		}
		defer nc.Close()
		ir := &idleReader{nc: nc, idle: r.cfg.DispatchIdle}
		if budget > 0 {
			ir.total = time.Now().Add(budget)
			nc.SetWriteDeadline(ir.total)
		}
		br := bufio.NewReaderSize(ir, 64<<10)
		// The ticket names the endpoint the lease signs, which the worker knows as its own,
		// whichever address reached it.
		if err := sendWith(nc, br, r.credential(ctx, nc, g.Endpoint), machineticket.Request(wire.OpCompile, req.Append(nil))); err != nil {
			return verbs.CompileReply{}, fmt.Errorf("worker %s: %w", addr, err)
		}
		_, payload, err := wire.ReadReply(br, wire.OpCompile, r.maxObject(), nil)
		if err != nil {
			return verbs.CompileReply{}, fmt.Errorf("worker %s: %w", addr, err)
		}
		return verbs.ParseCompileReply(payload)
	}
	return verbs.CompileReply{}, fmt.Errorf("no worker address reachable: %w", lastErr)
}

// maxObject is the client's cap on a reply and on the object inside it (pace-wire §5.12).
func (r *run) maxObject() uint32 {
	return uint32(min(max(r.cfg.MaxStoreBytes, 256<<20), 1<<31))
}

// landRemote writes a successful remote compile the way a local one would have: the object,
// the depfile from this machine's own probe, the worker's streams, its diagnostics mapped back
// to this machine's names.
func (r *run) landRemote(g verbs.LeaseGrant, reply verbs.CompileReply, pp probed, src remoteSource) (captured, bool) {
	if reply.ExitCode != 0 {
		return r.noDispatch(ccstats.CauseRemoteFailed, "worker %s: the compiler exited %d", g.Endpoint, reply.ExitCode)
	}
	if src.probe.directivesOnly {
		pp = src.probe
	}
	landed := ccstats.CauseDispatched
	if len(reply.Stderr) > 0 {
		stderr, why := r.remoteDiagnostics(reply.Stderr, src)
		if stderr == nil {
			return r.noDispatch(ccstats.CauseRemoteDiagnostics, "worker %s: the compile printed diagnostics pace-cc cannot replay exactly: %s", g.Endpoint, why)
		}
		reply.Stderr, landed = stderr, ccstats.CauseDiagnosticsReplayed
	}
	obj, err := wire.Open(reply.Object, r.maxObject(), wire.SupportedCodecs)
	if err == nil && !landsExactly(obj, src) {
		return r.noDispatch(ccstats.CauseRemoteObjectInexact, "worker %s: the object names the worker's scratch files", g.Endpoint)
	}
	if err == nil {
		err = writeAtomic(r.abs(r.comp.Output), obj)
	}
	if err == nil && r.comp.Deps.Mode != ccargs.DepNone {
		err = writeAtomic(r.abs(r.comp.Deps.File), pp.depfile)
	}
	if err != nil {
		return r.noDispatch(ccstats.CauseLandingFailed, "landing the object from %s: %v", g.Endpoint, err)
	}
	var c captured
	c.stdout.Write(reply.Stdout)
	c.stderr.Write(reply.Stderr)
	r.stdout.Write(reply.Stdout)
	r.stderr.Write(reply.Stderr)
	r.rec.Dispatch, r.rec.Worker = landed, g.Endpoint
	r.verbosef("DISPATCHED %s to %s", r.comp.Source, g.Endpoint)
	return c, true
}
