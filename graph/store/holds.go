package store

import (
	"context"
	"database/sql"
	"errors"
	"strconv"
	"time"

	"entgo.io/ent/dialect"

	"github.com/lib/pq"

	"barberd/ent/hold"
)

// KeyHolds is an API key's own cap on active holds (nil: the server's
// default) and how many holds it has active at an instant (0, uncounted,
// when it has no cap).
type KeyHolds struct {
	Cap    *int
	Active int
}

// CountKeyHolds reads a key's cap on active holds and, when it has one (its
// own, or else defaultCap when positive), counts its holds active at now,
// in one statement; sql.ErrNoRows when the account has no such key. Why
// not ent: ent reads the key and counts its holds in two round trips, and
// every hold pays them.
func CountKeyHolds(ctx context.Context, c Queryer, keyID string, defaultCap int, now time.Time) (KeyHolds, error) {
	var a sqlArgs
	q, err := countKeyHoldsQuery(ctx, a.add, keyID, defaultCap, now)
	if err != nil {
		return KeyHolds{}, err
	}
	return queryRows(ctx, c, q, a, scanKeyHolds)
}

// A key's cap on active holds is checked exactly on PostgreSQL by the
// hold's COMMIT. The hold's transaction asks for it (keyHoldsCheck, set
// by the statement its unlocked count rides in, KeyHoldsRide), and a
// deferred constraint trigger on the holds it inserts, run by COMMIT,
// locks the key's row and counts its active holds, this one included:
// more than the cap fails the COMMIT (OverKeyCap), and the hold is not
// written. Holds committing at once for one key take its lock in turn,
// and each count sees those committed before it. The lock is held only
// while the COMMIT runs, where a statement of its own after the insert
// held it a round trip longer, and cost one.
//
// barberd_lock_key_holds(key, account, default cap, active, now) is the
// lock and the count: a volatile function takes a snapshot for each of
// its statements (in READ COMMITTED), so the count sees what committed
// while the lock waited, as a statement after the lock would.
var postgresKeyHolds = []string{
	`CREATE OR REPLACE FUNCTION barberd_lock_key_holds(p_key text, p_account text, p_default bigint, p_active text, p_now timestamptz)
		RETURNS TABLE (o_cap bigint, o_active bigint) LANGUAGE plpgsql VOLATILE AS $$
		BEGIN
			PERFORM 1 FROM api_keys k WHERE k.id = p_key AND (p_account IS NULL OR k.account_id = p_account) FOR NO KEY UPDATE;
			RETURN QUERY ` + keyHoldsSelect("p_key", "p_default", "p_active", "p_now", " AND (p_account IS NULL OR k.account_id = p_account)") + `;
		END $$`,
	`CREATE OR REPLACE FUNCTION barberd_key_holds_checked() RETURNS trigger LANGUAGE plpgsql AS $$
		DECLARE
			asked text := current_setting('` + keyHoldsCheck + `', true);
			most bigint;
			active bigint;
		BEGIN
			IF asked IS NULL OR asked = '' OR NEW.status <> '` + string(hold.StatusActive) + `' THEN
				RETURN NULL;
			END IF;
			SELECT COALESCE(o_cap, split_part(asked, ' ', 1)::bigint), o_active INTO most, active
				FROM barberd_lock_key_holds(NEW.api_key_id, NEW.account_id, split_part(asked, ' ', 1)::bigint,
					NEW.status, split_part(asked, ' ', 2)::timestamptz);
			IF most > 0 AND active > most THEN
				RAISE EXCEPTION 'the API key % would hold % slots, more than its cap of %', NEW.api_key_id, active, most
					USING ERRCODE = '` + overKeyCapState + `';
			END IF;
			RETURN NULL;
		END $$`,
	`DROP TRIGGER IF EXISTS holds_key_cap ON holds`,
	`CREATE CONSTRAINT TRIGGER holds_key_cap AFTER INSERT ON holds DEFERRABLE INITIALLY DEFERRED
		FOR EACH ROW EXECUTE FUNCTION barberd_key_holds_checked()`,
}

// keyHoldsCheck is the setting by which a transaction asks its COMMIT to
// check the cap of the key of the holds it inserts: "DEFAULT NOW", the
// server's default cap and the instant the holds count as active at, or
// empty (not asked: a key without a cap).
const keyHoldsCheck = "barberd.key_holds_check"

// overKeyCapState is the SQLSTATE of a COMMIT refused by the check.
const overKeyCapState = "KH001"

// OverKeyCap reports whether err is a COMMIT that the key's cap refused:
// the hold was not written, and its key holds the most it may, or did
// when the COMMIT ran.
func OverKeyCap(err error) bool {
	var pe *pq.Error
	return errors.As(err, &pe) && pe.Code == overKeyCapState
}

// countKeyHoldsQuery is CountKeyHolds' statement, its values named by bind.
func countKeyHoldsQuery(ctx context.Context, bind func(any) string, keyID string, defaultCap int, now time.Time) (string, error) {
	acct, err := tenantFilter(ctx, bind, "k.")
	if err != nil {
		return "", err
	}
	return keyHoldsSelect(bind(keyID), bind(int64(defaultCap)), bind(string(hold.StatusActive)), bind(now), acct), nil
}

// keyHoldsSelect reads key id's cap and, when it has one (its own, or def
// when positive), counts its holds of status active that expire after at;
// acct is the condition on the key's account.
func keyHoldsSelect(id, def, active, at, acct string) string {
	return `SELECT CAST(k.max_active_holds AS bigint), CASE WHEN COALESCE(k.max_active_holds, ` + def + `) > 0 THEN (SELECT COUNT(*) FROM holds h
WHERE h.api_key_id = k.id AND h.status = ` + active + ` AND h.expires_at > ` + at + ` AND h.account_id = k.account_id) ELSE 0 END
FROM api_keys k WHERE k.id = ` + id + acct
}

// scanKeyHolds reads the row (a result set, not closed) of
// countKeyHoldsQuery; sql.ErrNoRows when there is none.
func scanKeyHolds(rows *sql.Rows) (KeyHolds, error) {
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return KeyHolds{}, err
		}
		return KeyHolds{}, sql.ErrNoRows
	}
	var most sql.NullInt64
	var out KeyHolds
	if err := rows.Scan(&most, &out.Active); err != nil {
		return KeyHolds{}, err
	}
	if most.Valid {
		n := int(most.Int64)
		out.Cap = &n
	}
	return out, nil
}

// KeyHoldsRide is a key's unlocked count of its active holds
// (CountKeyHolds) that the next barber lock of its transaction sends in
// its own statement (LockedSchedule, on PostgreSQL), or, for a hold
// written under a guard (Guarded), the next read of a barber's day
// (EachScheduleRow): one round trip fewer for a hold of a key with a cap.
// The lock is not taken when the key holds the most it may; the lock's
// statement then fails with ErrAtCap, before the barber's day is read.
// For a key with a cap, the same statement asks the transaction's COMMIT
// to count again, exactly (keyHoldsCheck).
type KeyHoldsRide struct {
	keyID      string
	defaultCap int
	now        time.Time
	riding     bool
	counted    bool
	kh         KeyHolds
}

// ErrAtCap is a barber lock's error when the key whose count rode in its
// statement (RideKeyHolds) holds the most it may: the lock was not taken.
var ErrAtCap = errors.New("store: the key holds the most it may")

// keyHoldsKey is the context key of the *KeyHoldsRide a lock takes.
type keyHoldsKey struct{}

// RideKeyHolds returns a context under which the next barber lock (or day
// read) counts the key's active holds at now (its cap, or defaultCap without one of
// its own) on PostgreSQL, and the ride that tells what it counted.
// Elsewhere nothing rides (Riding is false).
func RideKeyHolds(ctx context.Context, dia, keyID string, defaultCap int, now time.Time) (context.Context, *KeyHoldsRide) {
	r := &KeyHoldsRide{keyID: keyID, defaultCap: defaultCap, now: now, riding: dia == dialect.Postgres}
	if !r.riding {
		return ctx, r
	}
	return context.WithValue(ctx, keyHoldsKey{}, r), r
}

// Riding reports whether a lock or a read will count the key's holds.
func (r *KeyHoldsRide) Riding() bool { return r.riding }

// Counted returns what a lock's or a read's statement counted, and
// whether one did.
func (r *KeyHoldsRide) Counted() (KeyHolds, bool) { return r.kh, r.counted }

// ridingKeyHolds is the count of ctx a lock or a read is still to send,
// or nil.
func ridingKeyHolds(ctx context.Context) *KeyHoldsRide {
	if r, _ := ctx.Value(keyHoldsKey{}).(*KeyHoldsRide); r != nil && !r.counted {
		return r
	}
	return nil
}

// lockQuery is the lock of barberID's row (where, its condition) with the
// key's count in its WITH: the row is locked only when the key is under
// its cap, and the statement returns the locked id (NULL otherwise) with
// the key's cap and count.
func (r *KeyHoldsRide) lockQuery(ctx context.Context, bind func(any) string, where string) (string, error) {
	count, err := r.countQuery(ctx, bind)
	if err != nil {
		return "", err
	}
	def := bind(int64(r.defaultCap))
	return `WITH kh (most, active) AS (` + count + `),
locked AS (SELECT id, ` + genericPlans + where + ` AND NOT EXISTS (SELECT 1 FROM kh
WHERE COALESCE(kh.most, ` + def + `) > 0 AND kh.active >= COALESCE(kh.most, ` + def + `)) FOR UPDATE)
SELECT (SELECT id FROM locked), kh.most, kh.active FROM kh`, nil
}

// countQuery is the ride's count, its values named by bind: the key's cap
// (most) and its active holds (active), and, when it has a cap, the
// transaction's COMMIT asked to check it (keyHoldsCheck).
func (r *KeyHoldsRide) countQuery(ctx context.Context, bind func(any) string) (string, error) {
	count, err := countKeyHoldsQuery(ctx, bind, r.keyID, r.defaultCap, r.now)
	if err != nil {
		return "", err
	}
	asked := strconv.Itoa(r.defaultCap) + " " + r.now.UTC().Format(time.RFC3339Nano)
	return `SELECT c.most, c.active FROM (` + count + `) AS c (most, active)
CROSS JOIN LATERAL (SELECT set_config('` + keyHoldsCheck + `', CASE WHEN COALESCE(c.most, ` + bind(int64(r.defaultCap)) + `) > 0
THEN ` + bind(asked) + ` ELSE '' END, true)) AS asked`, nil
}

// scanLock reads the row of lockQuery: the count, and ErrAtCap when the
// lock was not taken for it (sql.ErrNoRows when the barber was not found).
func (r *KeyHoldsRide) scanLock(rows *sql.Rows) error {
	var locked sql.NullString
	return found(rows, func() error {
		var most sql.NullInt64
		if err := rows.Scan(&locked, &most, &r.kh.Active); err != nil {
			return err
		}
		if r.kh.Cap = nil; most.Valid {
			n := int(most.Int64)
			r.kh.Cap = &n
		}
		r.counted = true
		switch {
		case locked.Valid:
			return nil
		case r.kh.atCap(r.defaultCap):
			return ErrAtCap
		}
		return sql.ErrNoRows
	})
}

// atCap reports whether k holds the most it may (its cap, or defaultCap).
func (k KeyHolds) atCap(defaultCap int) bool {
	most := defaultCap
	if k.Cap != nil {
		most = *k.Cap
	}
	return most > 0 && k.Active >= most
}
