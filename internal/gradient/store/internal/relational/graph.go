package relational

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/store"
)

// batchGraph is one EvalResult batch on its way into the tables.
type batchGraph struct {
	evalID string
	ids    map[string]string  // drv path -> derivation id (batch and dependencies)
	fresh  []store.Derivation // newly described: outputs and edges to insert
	batch  []string           // derivation ids of the batch, in batch order
}

// AddEvalResult implements store.Evaluations.
func (s *Store) AddEvalResult(ctx context.Context, b store.EvalBatch) (store.Effects, error) {
	if err := validateBatch(b.Derivations); err != nil {
		return store.Effects{}, fmt.Errorf("add eval result: %w", err)
	}
	var out store.Effects
	err := s.write(ctx, "add eval result", func(tx Tx) error {
		c := s.newChange()
		a, err := openAssignment(ctx, tx, b.AssignmentID, store.JobEval)
		if err != nil {
			return err
		}
		if err := insertMessages(ctx, tx, a.evalID, batchMessages(b), c.now); err != nil {
			return err
		}
		g := &batchGraph{evalID: a.evalID, ids: map[string]string{}}
		if err := g.store(ctx, tx, b.Derivations, c.now); err != nil {
			return err
		}
		if err := s.queueBatch(ctx, tx, c, g); err != nil {
			return err
		}
		if err := queueEntryPointStatuses(ctx, tx, c.now, `ep.evaluation_id = $2`, a.evalID); err != nil { // gradient-server §12.2
			return err
		}
		out, err = s.finish(ctx, tx, c)
		return err
	})
	return out, err
}

func validateBatch(ds []store.Derivation) error {
	for _, d := range ds {
		if d.DrvPath == "" || d.System == "" {
			return fmt.Errorf("derivation %q: drv path and system required: %w", d.DrvPath, store.ErrInvalid)
		}
		for _, dep := range d.Dependencies {
			if dep == "" || dep == d.DrvPath {
				return fmt.Errorf("derivation %q: bad dependency %q: %w", d.DrvPath, dep, store.ErrInvalid)
			}
		}
	}
	return nil
}

func batchMessages(b store.EvalBatch) []store.Message {
	var msgs []store.Message
	for _, w := range b.Warnings {
		msgs = append(msgs, store.Message{Level: store.LevelWarning, Source: "eval", Text: w})
	}
	for _, e := range b.Errors {
		msgs = append(msgs, store.Message{Level: store.LevelError, Source: "eval", Text: e})
	}
	return msgs
}

// store writes derivations, stubs for unknown dependencies, outputs, edges, builds and entry
// points.
func (g *batchGraph) store(ctx context.Context, tx Tx, ds []store.Derivation, now time.Time) error {
	for _, d := range ds {
		if _, seen := g.ids[d.DrvPath]; seen {
			continue
		}
		id, fresh, err := upsertDerivation(ctx, tx, d, now)
		if err != nil {
			return err
		}
		g.ids[d.DrvPath] = id
		g.batch = append(g.batch, id)
		if fresh {
			g.fresh = append(g.fresh, d)
		}
	}
	if err := g.insertStubs(ctx, tx, now); err != nil {
		return err
	}
	if err := g.insertEdgesAndOutputs(ctx, tx); err != nil {
		return err
	}
	if err := g.insertBuilds(ctx, tx, ds, now); err != nil {
		return err
	}
	return g.insertEntryPoints(ctx, tx, ds)
}

// upsertDerivation inserts a derivation or describes its stub; fresh reports either. A
// derivation already described is immutable (its .drv path fixes its content).
func upsertDerivation(ctx context.Context, tx Tx, d store.Derivation, now time.Time) (id string, fresh bool, err error) {
	ids, err := queryStrings(ctx, tx, `INSERT INTO derivation (id, drv_path, system, required_features, timeout_secs,
			max_silent_secs, is_fixed_output, prefer_local_build, allow_substitutes, pname, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
		ON CONFLICT (drv_path) DO UPDATE SET system = excluded.system, required_features = excluded.required_features,
			timeout_secs = excluded.timeout_secs, max_silent_secs = excluded.max_silent_secs,
			is_fixed_output = excluded.is_fixed_output, prefer_local_build = excluded.prefer_local_build,
			allow_substitutes = excluded.allow_substitutes, pname = excluded.pname
		WHERE derivation.system IS NULL
		RETURNING id`, newID(), d.DrvPath, d.System, encodeList(d.RequiredFeatures), secs(d.TimeoutSecs),
		secs(d.MaxSilentSecs), d.IsFixedOutput, d.PreferLocalBuild, d.AllowSubstitutes, d.Pname, now)
	if err != nil || len(ids) == 1 {
		return firstOr(ids), err == nil, err
	}
	err = tx.QueryRow(ctx, `SELECT id FROM derivation WHERE drv_path = $1`, d.DrvPath).Scan(&id)
	return id, false, err
}

func firstOr(vs []string) string {
	if len(vs) == 0 {
		return ""
	}
	return vs[0]
}

// secs stores an optional seconds value (clamped into BIGINT).
func secs(v *uint64) any {
	if v == nil {
		return nil
	}
	return int64(min(*v, math.MaxInt64))
}

// insertStubs makes a row for every dependency not described yet (a forward reference) and
// maps all dependency paths to IDs.
func (g *batchGraph) insertStubs(ctx context.Context, tx Tx, now time.Time) error {
	var deps []string
	for _, d := range g.fresh {
		for _, dep := range d.Dependencies {
			if _, ok := g.ids[dep]; !ok {
				g.ids[dep] = ""
				deps = append(deps, dep)
			}
		}
	}
	var rows [][]any
	for _, dep := range deps {
		rows = append(rows, []any{newID(), dep, now})
	}
	if err := insertRows(ctx, tx, `INSERT INTO derivation (id, drv_path, created_at) VALUES `, rows,
		` ON CONFLICT (drv_path) DO NOTHING`); err != nil {
		return err
	}
	for _, part := range chunks(deps, inChunk) {
		r, err := tx.Query(ctx, `SELECT drv_path, id FROM derivation WHERE drv_path IN (`+placeholders(1, len(part))+`)`,
			stringArgs(part)...)
		if err != nil {
			return err
		}
		err = scanPairs(r, func(path, id string) { g.ids[path] = id })
		if err != nil {
			return err
		}
	}
	return nil
}

func (g *batchGraph) insertEdgesAndOutputs(ctx context.Context, tx Tx) error {
	var edges, outputs [][]any
	for _, d := range g.fresh {
		id := g.ids[d.DrvPath]
		for _, dep := range d.Dependencies {
			edges = append(edges, []any{id, g.ids[dep]})
		}
		for _, o := range d.Outputs {
			outputs = append(outputs, []any{id, o.Name, o.Path})
		}
	}
	if err := insertRows(ctx, tx, `INSERT INTO derivation_dependency (derivation_id, depends_on_id) VALUES `, edges,
		` ON CONFLICT DO NOTHING`); err != nil {
		return err
	}
	return insertRows(ctx, tx, `INSERT INTO derivation_output (derivation_id, name, path) VALUES `, outputs,
		` ON CONFLICT DO NOTHING`)
}

func (g *batchGraph) insertBuilds(ctx context.Context, tx Tx, ds []store.Derivation, now time.Time) error {
	var rows [][]any
	seen := map[string]bool{}
	for _, d := range ds {
		if seen[d.DrvPath] {
			continue
		}
		seen[d.DrvPath] = true
		rows = append(rows, []any{newID(), g.ids[d.DrvPath], secs(d.TimeoutSecs), secs(d.MaxSilentSecs), now})
	}
	return insertRows(ctx, tx, `INSERT INTO build (id, derivation_id, status, timeout_secs, max_silent_secs, updated_at)
		VALUES `, withStatusCreated(rows), ` ON CONFLICT (derivation_id) DO NOTHING`)
}

// withStatusCreated puts status 0 (Created) into build rows as a parameter.
func withStatusCreated(rows [][]any) [][]any {
	for i, r := range rows {
		rows[i] = []any{r[0], r[1], int(store.BuildCreated), r[2], r[3], r[4]}
	}
	return rows
}

func (g *batchGraph) insertEntryPoints(ctx context.Context, tx Tx, ds []store.Derivation) error {
	var rows [][]any
	for _, d := range ds {
		if d.Attr != "" {
			rows = append(rows, []any{g.evalID, d.Attr, g.ids[d.DrvPath]})
		}
	}
	return insertRows(ctx, tx, `INSERT INTO entry_point (evaluation_id, attr, derivation_id) VALUES `, rows,
		` ON CONFLICT DO NOTHING`)
}

// insertRows runs a multi-row INSERT, chunked to stay well below parameter limits.
func insertRows(ctx context.Context, tx Tx, prefix string, rows [][]any, suffix string) error {
	if len(rows) == 0 {
		return nil
	}
	per := max(1, 900/len(rows[0]))
	for start := 0; start < len(rows); start += per {
		part := rows[start:min(start+per, len(rows))]
		var sb strings.Builder
		var args []any
		for i, r := range part {
			if i > 0 {
				sb.WriteString(", ")
			}
			sb.WriteString("(" + placeholders(len(args)+1, len(r)) + ")")
			args = append(args, r...)
		}
		if _, err := tx.Exec(ctx, prefix+sb.String()+suffix, args...); err != nil {
			return err
		}
	}
	return nil
}

func scanPairs(rows Rows, fn func(a, b string)) error {
	defer rows.Close()
	for rows.Next() {
		var a, b string
		if err := rows.Scan(&a, &b); err != nil {
			return err
		}
		fn(a, b)
	}
	return rows.Err()
}
