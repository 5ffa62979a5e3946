package api

import (
	"context"
	"net/http"
	"time"
)

// GCRequest is the body of POST /gc (gradient-server §15); it may be left out.
type GCRequest struct {
	// DryRun lists what a collection would delete and deletes nothing.
	DryRun bool `json:"dry_run,omitempty"`
}

// GCReport is what a collection of the server's cache found and did.
type GCReport struct {
	DryRun          bool        `json:"dry_run"`
	KeptEvaluations int         `json:"kept_evaluations"`
	Roots           int         `json:"roots"`
	KeptPaths       int         `json:"kept_paths"`
	KeptBytes       int64       `json:"kept_bytes"`
	Deleted         []GCDeleted `json:"deleted"`
	DeletedBytes    int64       `json:"deleted_bytes"`
	// Busy counts paths left alone because an upload of them was in progress.
	Busy              int `json:"busy"`
	EvaluationsPruned int `json:"evaluations_pruned"`
	LogsPruned        int `json:"logs_pruned"`
}

// GCDeleted is one path a collection deleted (a dry run: would delete).
type GCDeleted struct {
	StorePath string    `json:"store_path"`
	Size      int64     `json:"size"` // bytes on disk
	Since     time.Time `json:"since"`
	Reason    string    `json:"reason"`
}

// GarbageCollector runs one collection of the server's cache.
type GarbageCollector func(ctx context.Context, dryRun bool) (GCReport, error)

// collectGarbage runs a collection, or with dry_run only plans one.
func (a *api) collectGarbage(w http.ResponseWriter, r *http.Request) error {
	var req GCRequest
	if err := decodeOptionalBody(w, r, &req); err != nil {
		return err
	}
	if a.gc == nil {
		return &httpError{http.StatusNotImplemented, CodeNotImplemented, "this server does not collect its cache"}
	}
	rep, err := a.gc(r.Context(), req.DryRun)
	if err != nil {
		return err
	}
	if rep.Deleted == nil {
		rep.Deleted = []GCDeleted{}
	}
	writeJSON(w, http.StatusOK, rep)
	return nil
}
