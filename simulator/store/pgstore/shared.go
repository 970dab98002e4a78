package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store"
)

// What replicas share besides the objects (schema 3): fault rules and their firing counts
// (store.FaultKeeper), the runtime settings (store.ConfigKeeper) and the dashboard's sessions
// (store.SessionKeeper). A change to the rules or the settings is sent to the other replicas with
// the next batch of notifications (notify.go); sessions are read where they are used.

var (
	_ store.FaultKeeper   = (*Store)(nil)
	_ store.ConfigKeeper  = (*Store)(nil)
	_ store.SessionKeeper = (*Store)(nil)
)

// FaultRules implements store.FaultKeeper.
func (s *Store) FaultRules(ctx context.Context) ([]store.FaultRule, error) {
	rows, err := s.pool.Query(ctx, "SELECT id, tenant, rule, count, fired FROM fault_rules ORDER BY seq")
	if err != nil {
		return nil, pgErr("fault rules", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (store.FaultRule, error) {
		var r store.FaultRule
		err := row.Scan(&r.ID, &r.Tenant, &r.Rule, &r.Count, &r.Fired)
		return r, err
	})
	return out, pgErr("fault rules", err)
}

// AddFaultRule implements store.FaultKeeper. A transaction-scoped advisory lock on the tenant makes
// replicas adding rules at once count one after the other.
func (s *Store) AddFaultRule(ctx context.Context, r store.FaultRule, limit int) (store.FaultRule, bool, error) {
	ok := false
	err := pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{}, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1, hashtext($2))", pgFaultLock, r.Tenant); err != nil {
			return err
		}
		var held int
		if err := tx.QueryRow(ctx, "SELECT count(*) FROM fault_rules WHERE tenant = $1", r.Tenant).Scan(&held); err != nil {
			return err
		}
		if held >= limit {
			return nil
		}
		ok = true
		r.Fired = 0
		return tx.QueryRow(ctx, `INSERT INTO fault_rules (seq, id, tenant, rule, count)
			SELECT n, 'fault-' || n, $1, $2, $3 FROM (SELECT nextval('fault_rule_seq') AS n) AS next RETURNING id`,
			r.Tenant, r.Rule, r.Count).Scan(&r.ID)
	})
	if err != nil {
		return r, false, pgErr("add fault rule", err)
	}
	if ok {
		s.notes.add(nil, pgFlags{Faults: true})
	}
	return r, ok, nil
}

// pgFaultLock is the first key of the advisory locks on a tenant's fault rules.
const pgFaultLock int32 = 0x6c666c74 // "lflt"

// DeleteFaultRule implements store.FaultKeeper.
func (s *Store) DeleteFaultRule(ctx context.Context, tenant, id string) error {
	tag, err := s.pool.Exec(ctx, "DELETE FROM fault_rules WHERE id = $1 AND tenant = $2", id, tenant)
	if err != nil {
		return pgErr("delete fault rule", err)
	}
	if tag.RowsAffected() == 0 {
		return store.ErrNotFound
	}
	s.notes.add(nil, pgFlags{Faults: true})
	return nil
}

// DeleteFaultRules implements store.FaultKeeper.
func (s *Store) DeleteFaultRules(ctx context.Context, tenant string, everyone bool) error {
	var err error
	if everyone {
		_, err = s.pool.Exec(ctx, "DELETE FROM fault_rules")
	} else {
		_, err = s.pool.Exec(ctx, "DELETE FROM fault_rules WHERE tenant = $1", tenant)
	}
	if err != nil {
		return pgErr("delete fault rules", err)
	}
	s.notes.add(nil, pgFlags{Faults: true})
	return nil
}

// FireFaultRule implements store.FaultKeeper in one statement: the row's lock makes replicas firing
// the same rule at once count one after the other, each seeing the other's count.
func (s *Store) FireFaultRule(ctx context.Context, tenant, id string) (int64, bool, error) {
	var fired int64
	err := s.pool.QueryRow(ctx, `UPDATE fault_rules SET fired = fired + 1
		WHERE id = $1 AND tenant = $2 AND (count = 0 OR fired < count) RETURNING fired`, id, tenant).Scan(&fired)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, pgErr("fire fault rule", err)
	}
	return fired, true, nil
}

// configKey is the settings row of the runtime settings (store.Config as JSON).
const configKey = "config"

// Config implements store.ConfigKeeper.
func (s *Store) Config(ctx context.Context) (store.Config, bool, error) {
	var v string
	err := s.pool.QueryRow(ctx, "SELECT value FROM settings WHERE key = $1", configKey).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return store.Config{}, false, nil
	}
	if err != nil {
		return store.Config{}, false, pgErr("config", err)
	}
	var c store.Config
	if err := json.Unmarshal([]byte(v), &c); err != nil {
		return store.Config{}, false, fmt.Errorf("postgres: config %q: %w", v, err)
	}
	return c, true, nil
}

// SetConfig implements store.ConfigKeeper.
func (s *Store) SetConfig(ctx context.Context, c store.Config) error {
	b, err := json.Marshal(c)
	if err != nil {
		return fmt.Errorf("postgres: set config: %w", err)
	}
	_, err = s.pool.Exec(ctx, `INSERT INTO settings (key, value) VALUES ($1, $2)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value`, configKey, string(b))
	if err != nil {
		return pgErr("set config", err)
	}
	s.notes.add(nil, pgFlags{Config: true})
	return nil
}

// CreateSession implements store.SessionKeeper: one transaction trims the tenant's sessions and
// inserts the new one. Replicas signing in one tenant at once may each keep limit for a moment;
// the next sign-in trims them again.
func (s *Store) CreateSession(ctx context.Context, ss store.Session, now time.Time, limit int) error {
	err := pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{}, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `DELETE FROM dashboard_sessions WHERE tenant = $1 AND (expires < $2 OR key IN (
				SELECT key FROM dashboard_sessions WHERE tenant = $1 ORDER BY expires DESC, key OFFSET $3))`,
			[]byte(ss.Tenant), now.UnixNano(), max(limit-1, 0)); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO dashboard_sessions (key, tenant, token_hash, csrf, expires) VALUES ($1, $2, $3, $4, $5)`,
			ss.Key, []byte(ss.Tenant), append([]byte{}, ss.TokenHash...), ss.CSRF, ss.Expires.UnixNano())
		return err
	})
	return pgErr("create session", err)
}

// pgSessionSlack is how far a session's expiry may lag before Session extends it: the least
// extension it writes.
const pgSessionSlack = time.Minute

// Session implements store.SessionKeeper in one statement, which writes only when the expiry moves
// by more than pgSessionSlack.
func (s *Store) Session(ctx context.Context, key []byte, now time.Time, ttl time.Duration) (store.Session, bool, error) {
	ss := store.Session{Key: key}
	var tenant []byte
	var expires int64
	err := s.pool.QueryRow(ctx, `WITH live AS (
			SELECT key, tenant, token_hash, csrf, expires FROM dashboard_sessions WHERE key = $1 AND expires >= $2
		), extended AS (
			UPDATE dashboard_sessions d SET expires = $3 FROM live WHERE d.key = live.key AND live.expires < $4 RETURNING d.expires
		)
		SELECT tenant, token_hash, csrf, greatest(expires, coalesce((SELECT max(expires) FROM extended), 0)) FROM live`,
		key, now.UnixNano(), now.Add(ttl).UnixNano(), now.Add(ttl-pgSessionSlack).UnixNano()).Scan(&tenant, &ss.TokenHash, &ss.CSRF, &expires)
	if errors.Is(err, pgx.ErrNoRows) {
		return store.Session{}, false, nil
	}
	if err != nil {
		return store.Session{}, false, pgErr("session", err)
	}
	ss.Tenant, ss.Expires = string(tenant), time.Unix(0, expires)
	return ss, true, nil
}

// EndSession implements store.SessionKeeper.
func (s *Store) EndSession(ctx context.Context, key []byte) error {
	_, err := s.pool.Exec(ctx, "DELETE FROM dashboard_sessions WHERE key = $1", key)
	return pgErr("end session", err)
}
