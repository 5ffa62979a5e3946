package server

import (
	"errors"
	"fmt"
	"strings"

	"github.com/buildfleet/buildfleet/internal/gradient/store"
	"github.com/buildfleet/buildfleet/internal/gradient/wire"
)

// errInvalidReport: a decodable report about one job breaks the rules for its content (a
// path that is not a store path, an update of the other job kind, another build's ID). It
// costs that job, never the session (gradient-server §6.1).
var errInvalidReport = errors.New("invalid report")

// maxReasonBytes bounds the part of an invalid report's description that reaches the
// store, the log and the AbortJob (it quotes worker-supplied text).
const maxReasonBytes = 512

// checkUpdate validates a JobUpdate against the job its assignment runs.
func checkUpdate(job store.JobRef, u wire.JobUpdateKind) error {
	var kind store.JobKind
	var err error
	switch u := u.(type) {
	case *wire.JobUpdateFetching, *wire.JobUpdateEvaluatingFlake, *wire.JobUpdateEvaluatingDerivations:
		kind = store.JobEval
	case *wire.JobUpdateFetchResult:
		kind = store.JobEval
		if src, ok := u.FlakeSource.Get(); ok {
			err = checkStorePath("flake source", src)
		}
	case *wire.JobUpdateEvalResult:
		kind, err = store.JobEval, checkDerivations(u.Derivations)
	case *wire.JobUpdateBuilding:
		kind, err = store.JobBuild, checkBuildID(job, u.BuildID)
	case *wire.JobUpdateBuildOutput:
		kind, err = store.JobBuild, checkBuildOutput(job, u)
	case *wire.JobUpdateStage:
		kind = store.JobBuild
	default:
		return nil // updates the server does not apply (input updates, Compressing)
	}
	if kind != job.Kind {
		return fmt.Errorf("%w: %T on a %s job", errInvalidReport, u, job.Kind)
	}
	return err
}

// checkFailed validates a JobFailed: the missing paths of InputsUnavailable are what the
// server demotes and re-builds, so each must be a store path.
func checkFailed(m *wire.JobFailed) error {
	for _, p := range m.MissingPaths {
		if err := checkStorePath("missing path", p); err != nil {
			return err
		}
	}
	return nil
}

func checkDerivations(ds []wire.DiscoveredDerivation) error {
	for _, d := range ds {
		if err := checkDrvPath("derivation", d.DrvPath); err != nil {
			return err
		}
		if d.Architecture == "" {
			return fmt.Errorf("%w: derivation %.200q has no system", errInvalidReport, d.DrvPath)
		}
		for _, o := range d.Outputs {
			if o.Name == "" {
				return fmt.Errorf("%w: derivation %.200q has an unnamed output", errInvalidReport, d.DrvPath)
			}
			if o.Path == "" {
				continue // a floating content-addressed output: its path is known once built
			}
			if err := checkStorePath("output", o.Path); err != nil {
				return err
			}
		}
		for _, dep := range d.Dependencies {
			if err := checkDrvPath("dependency", dep); err != nil {
				return err
			}
			if dep == d.DrvPath {
				return fmt.Errorf("%w: derivation %.200q depends on itself", errInvalidReport, d.DrvPath)
			}
		}
		for _, src := range d.InputSources {
			if err := checkStorePath("input source", src); err != nil {
				return err
			}
		}
	}
	return nil
}

func checkBuildOutput(job store.JobRef, u *wire.JobUpdateBuildOutput) error {
	if err := checkBuildID(job, u.BuildID); err != nil {
		return err
	}
	for _, o := range u.Outputs {
		if o.Name == "" {
			return fmt.Errorf("%w: an unnamed output", errInvalidReport)
		}
		if err := checkStorePath("output", o.StorePath); err != nil {
			return err
		}
	}
	return nil
}

// checkBuildID: a build job carries exactly one build, the job's own.
func checkBuildID(job store.JobRef, buildID string) error {
	if buildID != job.ID {
		return fmt.Errorf("%w: build %.64q reported on job %s", errInvalidReport, buildID, job)
	}
	return nil
}

// checkStorePath accepts a full store path, /nix/store/<nix32 hash>-<name>.
func checkStorePath(what, p string) error {
	rest, ok := strings.CutPrefix(p, storeDir+"/")
	if _, err := store.StoreHash(rest); !ok || err != nil || strings.ContainsRune(rest, '/') {
		return fmt.Errorf("%w: %s %.200q is not a store path", errInvalidReport, what, p)
	}
	return nil
}

func checkDrvPath(what, p string) error {
	if err := checkStorePath(what, p); err != nil {
		return err
	}
	if !strings.HasSuffix(p, ".drv") {
		return fmt.Errorf("%w: %s %.200q is not a .drv", errInvalidReport, what, p)
	}
	return nil
}

// storeDir is the store directory gradient's paths live in.
const storeDir = "/nix/store"

// truncateReason keeps an invalid report's description short.
func truncateReason(s string) string {
	if len(s) <= maxReasonBytes {
		return s
	}
	return strings.ToValidUTF8(s[:maxReasonBytes], "") + "…"
}
