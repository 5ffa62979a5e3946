package relational

import (
	"context"
	"errors"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/store"
)

// statusEvent is one status to queue: of an evaluation (buildID "") or of one entry point's
// build (gradient-server §12.2).
type statusEvent struct {
	evalID, buildID, attr, state, description string
}

// sinks is a project's configured destinations, read inside the transaction.
type sinks struct {
	project         string
	forge, webhook  bool
	perBuild, found bool
}

func projectSinks(ctx context.Context, tx Tx, evalID string) (sinks, error) {
	var k sinks
	var forge, url string
	err := tx.QueryRow(ctx, `SELECT p.name, ps.forge, ps.notify_url, ps.per_build FROM evaluation e
		JOIN project p ON p.id = e.project_id JOIN project_status ps ON ps.project_id = e.project_id
		WHERE e.id = $1`, evalID).Scan(&k.project, &forge, &url, &k.perBuild)
	if errors.Is(err, ErrNoRows) {
		return k, nil
	}
	k.forge, k.webhook, k.found = forge != "", url != "", err == nil
	return k, err
}

// statusContext names a status on the forge: one per project, one per entry point.
func statusContext(project, attr string) string {
	if attr == "" {
		return "gradient/" + project
	}
	return "gradient/" + project + "/" + attr
}

// enqueueStatus queues ev for each configured sink, unless the newest row of that context
// already says the same state. Older queued rows of the context are superseded: the forge
// only needs the latest state.
func enqueueStatus(ctx context.Context, tx Tx, now time.Time, k sinks, ev statusEvent) error {
	context := statusContext(k.project, ev.attr)
	for _, sink := range []struct {
		name string
		on   bool
	}{{store.SinkForge, k.forge}, {store.SinkWebhook, k.webhook}} {
		if !sink.on {
			continue
		}
		var last string
		err := tx.QueryRow(ctx, `SELECT state FROM status_outbox WHERE evaluation_id = $1 AND sink = $2 AND context = $3
			ORDER BY id DESC LIMIT 1`, ev.evalID, sink.name, context).Scan(&last)
		if err != nil && !errors.Is(err, ErrNoRows) {
			return err
		}
		if last == ev.state {
			continue
		}
		if _, err := tx.Exec(ctx, `UPDATE status_outbox SET outcome = 'superseded' WHERE evaluation_id = $1 AND sink = $2
			AND context = $3 AND outcome = ''`, ev.evalID, sink.name, context); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO status_outbox (id, evaluation_id, build_id, attr, sink, context, state,
				description, next_at, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9)`,
			newID(), ev.evalID, nilIfEmptyString(ev.buildID), ev.attr, sink.name, context, ev.state, ev.description, now); err != nil {
			return err
		}
	}
	return nil
}

// queueEvaluationStatus queues the evaluation's own status in state.
func queueEvaluationStatus(ctx context.Context, tx Tx, now time.Time, evalID string, status store.EvaluationStatus) error {
	k, err := projectSinks(ctx, tx, evalID)
	if err != nil || !k.found {
		return err
	}
	state, desc := evaluationState(status)
	return enqueueStatus(ctx, tx, now, k, statusEvent{evalID: evalID, state: state, description: desc})
}

func evaluationState(s store.EvaluationStatus) (state, description string) {
	switch s {
	case store.EvalCompleted:
		return "success", "evaluation completed, every build succeeded"
	case store.EvalFailed:
		return "failure", "evaluation failed"
	case store.EvalAborted:
		return "canceled", "evaluation aborted"
	}
	return "pending", "evaluation " + s.String()
}

func buildState(s store.BuildStatus) (state, description string) {
	switch {
	case s.Succeeded():
		return "success", "build " + s.String()
	case s == store.BuildAborted:
		return "canceled", "build aborted"
	case s.Terminal():
		return "failure", "build " + s.String()
	}
	return "pending", "build " + s.String()
}

// queueStatuses queues what a change caused (gradient-server §12.2): for projects with
// statuses per build, the status of each entry point whose build it ended, then the final
// status of each evaluation it settled.
func queueStatuses(ctx context.Context, tx Tx, c *change) error {
	for _, part := range chunks(c.touched, inChunk) {
		if err := queueEntryPointStatuses(ctx, tx, c.now, `b.id IN (`+placeholders(2, len(part))+`)`, stringArgs(part)...); err != nil {
			return err
		}
	}
	for _, ev := range c.Settled {
		if err := queueEvaluationStatus(ctx, tx, c.now, ev.EvaluationID, ev.Status); err != nil {
			return err
		}
	}
	return nil
}

// queueEntryPointStatuses queues the per-build status of each entry point matching where
// (over entry_point ep and build b; its parameters start at $2) in a project with statuses
// per build.
func queueEntryPointStatuses(ctx context.Context, tx Tx, now time.Time, where string, args ...any) error {
	type point struct {
		evalID, attr, buildID string
		status                int
	}
	points, err := queryAll(ctx, tx, func(r Row) (point, error) {
		var p point
		return p, r.Scan(&p.evalID, &p.attr, &p.buildID, &p.status)
	}, `SELECT ep.evaluation_id, ep.attr, b.id, b.status FROM entry_point ep
		JOIN build b ON b.derivation_id = ep.derivation_id JOIN evaluation e ON e.id = ep.evaluation_id
		JOIN project_status ps ON ps.project_id = e.project_id
		WHERE ps.per_build = $1 AND `+where+` ORDER BY ep.evaluation_id, ep.attr`, append([]any{true}, args...)...)
	if err != nil {
		return err
	}
	for _, p := range points {
		k, err := projectSinks(ctx, tx, p.evalID)
		if err != nil {
			return err
		}
		state, desc := buildState(store.BuildStatus(p.status))
		if err := enqueueStatus(ctx, tx, now, k, statusEvent{evalID: p.evalID, buildID: p.buildID, attr: p.attr,
			state: state, description: desc}); err != nil {
			return err
		}
	}
	return nil
}
