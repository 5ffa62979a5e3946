package store

import (
	"fmt"
	"strings"

	"github.com/buildfleet/buildfleet/internal/gradient/nixhash"
)

// JobKind is what an assignment runs: a flake job (fetch + evaluate) or a build job.
type JobKind uint8

const (
	JobEval  JobKind = 0
	JobBuild JobKind = 1
)

func (k JobKind) String() string {
	switch k {
	case JobEval:
		return "eval"
	case JobBuild:
		return "build"
	}
	return fmt.Sprintf("JobKind(%d)", uint8(k))
}

// JobRef names a job: the evaluation (JobEval) or build (JobBuild) it runs.
type JobRef struct {
	Kind JobKind
	ID   string // evaluation or build ID
}

// EvalJob and BuildJob make JobRefs.
func EvalJob(id string) JobRef  { return JobRef{Kind: JobEval, ID: id} }
func BuildJob(id string) JobRef { return JobRef{Kind: JobBuild, ID: id} }

// String is the wire job_id: "eval:<uuid>" or "build:<uuid>".
func (j JobRef) String() string { return j.Kind.String() + ":" + j.ID }

// ParseJobID parses a wire job_id. It checks the prefix and that an ID follows, not that the
// ID exists.
func ParseJobID(s string) (JobRef, error) {
	kind, id, ok := strings.Cut(s, ":")
	if !ok || id == "" {
		return JobRef{}, fmt.Errorf("job id %q: %w", s, ErrInvalid)
	}
	switch kind {
	case "eval":
		return EvalJob(id), nil
	case "build":
		return BuildJob(id), nil
	}
	return JobRef{}, fmt.Errorf("job id %q: unknown kind: %w", s, ErrInvalid)
}

// StoreHash is the 32-character hash part of a Nix store path, the cached_path key
// (gradient-server §9): "/nix/store/<hash>-<name>" or the "<hash>-<name>" reference form.
func StoreHash(storePath string) (string, error) {
	base := storePath
	if i := strings.LastIndexByte(base, '/'); i >= 0 {
		base = base[i+1:]
	}
	hash, name, ok := strings.Cut(base, "-")
	if !ok || len(hash) != 32 || name == "" || !nixhash.IsBase32(hash) {
		return "", fmt.Errorf("store path %q: %w", storePath, ErrInvalid)
	}
	return hash, nil
}
