package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/internal/codec"
)

// Removed implements store.Store: the tenant's histories whose object is gone.
func (s *Store) Removed(ctx context.Context, tenant string) ([]string, error) {
	rows, err := s.pool.Query(ctx, `SELECT DISTINCT e.object_id FROM events e
		WHERE e.tenant = $1 AND NOT EXISTS (SELECT FROM objects o WHERE o.id = e.object_id) ORDER BY 1`, tenant)
	if err != nil {
		return nil, pgErr("removed objects", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	return ids, pgErr("removed objects", err)
}

// Import implements store.Store in one transaction: the objects and the events each in one
// statement (arrays unnested), the tenant's count and quota as a commit counts them, and the
// fault rules with their IDs, the rules' sequence moved past them so that the rules added
// later get new ones.
func (s *Store) Import(ctx context.Context, im store.Import) error {
	ids, err := store.CheckImport(im)
	if err != nil {
		return err
	}
	objs, err := importColumns(im)
	if err != nil {
		return err
	}
	evIDs, evSeqs, evData := make([]string, len(im.Events)), make([]int64, len(im.Events)), make([][]byte, len(im.Events))
	for i, e := range im.Events {
		evIDs[i], evSeqs[i] = e.ObjectID, e.Seq
		e.ObjectID, e.Tenant, e.Seq = "", "", 0 // columns hold them
		if evData[i], err = json.Marshal(e); err != nil {
			return fmt.Errorf("postgres: import: encode an event of %s: %w", evIDs[i], err)
		}
	}
	ruleIDs := make([]string, len(im.FaultRules))
	for i, r := range im.FaultRules {
		ruleIDs[i] = r.ID
	}
	err = pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{}, func(tx pgx.Tx) error {
		var taken string
		err := tx.QueryRow(ctx, `SELECT id FROM objects WHERE id = ANY($1)
			UNION ALL SELECT object_id FROM events WHERE object_id = ANY($1) AND seq = 1 ORDER BY 1 LIMIT 1`,
			append(objs.ids, ids...)).Scan(&taken)
		if err == nil {
			return &store.IDTakenError{What: "object", ID: taken}
		} else if !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		if err := tx.QueryRow(ctx, "SELECT id FROM fault_rules WHERE id = ANY($1) ORDER BY 1 LIMIT 1", ruleIDs).Scan(&taken); err == nil {
			return &store.IDTakenError{What: "fault rule", ID: taken}
		} else if !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		// Objects in a phase are due with no owner: the sweep of this replica's next claim takes
		// them (claim.go), or any replica's.
		if _, err := tx.Exec(ctx, `INSERT INTO objects (id, tenant, kind, parent_id, state, version, links, events, data, due)
			SELECT id, $1, kind, parent_id, state, version, links::jsonb, events, data, due
			FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::bigint[], $7::text[], $8::bigint[], $9::bytea[], $10::bigint[])
				AS o(id, kind, parent_id, state, version, links, events, data, due)`,
			im.Tenant, objs.ids, objs.kinds, objs.parents, objs.states, objs.versions, objs.links, objs.events, objs.data, objs.dues); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO events (object_id, seq, tenant, data)
			SELECT id, seq, $1, data FROM unnest($2::text[], $3::bigint[], $4::bytea[]) AS e(id, seq, data)`,
			im.Tenant, evIDs, evSeqs, evData); err != nil {
			return err
		}
		if n := len(im.Objects); n > 0 {
			var held int
			if err := tx.QueryRow(ctx, `INSERT INTO tenants AS t (tenant, objects) VALUES ($1, $2)
				ON CONFLICT (tenant) DO UPDATE SET objects = t.objects + excluded.objects RETURNING objects - $2`, im.Tenant, n).Scan(&held); err != nil {
				return err
			}
			if im.MaxObjects > 0 && held+n > im.MaxObjects {
				return &store.QuotaError{Tenant: im.Tenant, Max: im.MaxObjects, Held: held, Asked: n}
			}
		}
		return importFaultRules(ctx, tx, im)
	})
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "23505" { // unique_violation: an insert raced this one
		return store.ErrExists
	}
	if err != nil {
		return pgErr("import", err)
	}
	changed := make([]store.ChangedObject, len(im.Objects))
	for i, o := range im.Objects {
		changed[i] = store.ChangedObject{Tenant: im.Tenant, ID: o.ID}
	}
	s.notes.add(changed, pgFlags{Faults: len(im.FaultRules) > 0})
	s.owned.sweepSoon()
	return nil
}

// importFaultRules inserts an import's fault rules in their order, and moves the sequence
// that numbers new rules ("fault-" and its next value) past the numbers the imported IDs hold.
func importFaultRules(ctx context.Context, tx pgx.Tx, im store.Import) error {
	var past int64
	for _, r := range im.FaultRules {
		if _, err := tx.Exec(ctx, "INSERT INTO fault_rules (id, tenant, rule, count, fired) VALUES ($1, $2, $3, $4, $5)",
			r.ID, im.Tenant, r.Rule, r.Count, r.Fired); err != nil {
			return err
		}
		if n, err := strconv.ParseInt(strings.TrimPrefix(r.ID, "fault-"), 10, 64); err == nil {
			past = max(past, n)
		}
	}
	if past > 0 {
		_, err := tx.Exec(ctx, "SELECT setval('fault_rule_seq', GREATEST((SELECT last_value FROM fault_rule_seq), $1))", past)
		return err
	}
	return nil
}

// pgImportColumns are an import's objects as the columns of the objects table.
type pgImportColumns struct {
	ids, kinds, parents, states, links []string
	versions, events                   []int64
	dues                               []*int64
	data                               [][]byte
}

// importColumns encodes an import's objects, with the number of events each one's history has.
func importColumns(im store.Import) (*pgImportColumns, error) {
	b := store.Batch{Writes: make([]store.Write, len(im.Objects))}
	for i, o := range im.Objects {
		b.Writes[i] = store.Write{Object: o}
	}
	datas, err := codec.PackWrites(b)
	if err != nil {
		return nil, fmt.Errorf("postgres: import: %w", err)
	}
	counts := map[string]int64{}
	for _, e := range im.Events {
		counts[e.ObjectID] = e.Seq
	}
	c := &pgImportColumns{data: datas}
	for _, o := range im.Objects {
		links, err := linksColumn(o.Spec)
		if err != nil {
			return nil, fmt.Errorf("postgres: import %s: %w", o.ID, err)
		}
		due := codec.DueOf(o.Due)
		c.ids, c.kinds, c.parents, c.states, c.links = append(c.ids, o.ID), append(c.kinds, o.Kind), append(c.parents, o.ParentID),
			append(c.states, o.State), append(c.links, links)
		c.versions, c.events, c.dues = append(c.versions, o.Version), append(c.events, counts[o.ID]), append(c.dues, dueColumn(due.Nanos, due.Valid))
	}
	return c, nil
}

// dueColumn is a due time as the objects' column: nil for an object in no phase.
func dueColumn(nanos int64, valid bool) *int64 {
	if !valid {
		return nil
	}
	return &nanos
}
