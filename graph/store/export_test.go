package store

import (
	"context"
	"database/sql"
	"strconv"
	"time"

	"entgo.io/ent/dialect"

	"barberd/ent/schema/tenant"
)

// literalParams binds values as typed parameters, as the statement cache
// prepares a statement, and keeps them as PostgreSQL literals in args.
func literalParams() (args *[]string, param func(any) string) {
	args = new([]string)
	return args, func(v any) string {
		*args = append(*args, literal(v))
		return "$" + strconv.Itoa(len(*args)) + literalType(v)
	}
}

// InsertOpeningStatement is InsertOpenings' statement for one span, with
// its values as typed parameters, as the statement cache prepares it, and
// those values as PostgreSQL literals.
func InsertOpeningStatement(dia, accountID, barberID string, start, end, now time.Time) (string, []string) {
	args, param := literalParams()
	return insertOpeningQuery(dia, param, "opn_plan", accountID, barberID, start, end, now), *args
}

// DeleteExpiredStatement is DeleteExpiredReservations' statement for an
// account's barber, likewise.
func DeleteExpiredStatement(accountID, barberID string, now time.Time) (string, []string) {
	args, param := literalParams()
	return deleteExpiredQuery(param, accountID, barberID, now), *args
}

// DeleteExpiredQuery is that statement as it is sent, and its values.
func DeleteExpiredQuery(accountID, barberID string, now time.Time) (string, []any) {
	var a sqlArgs
	return deleteExpiredQuery(a.add, accountID, barberID, now), a
}

func deleteExpiredQuery(bind func(any) string, accountID, barberID string, now time.Time) string {
	q, err := expiredQuery(tenant.WithAccount(context.Background(), accountID), bind, barberID, now, "")
	if err != nil {
		panic(err) // an account is given
	}
	return q
}

// ParseBreaks is parseBreaks, for tests.
var ParseBreaks = parseBreaks

// SocketWrites is how many writes the connection c has made on its
// socket: its round trips to the server.
func SocketWrites(c *sql.Conn) (n int64, err error) {
	err = c.Raw(func(dc any) error {
		n = dc.(*pqConn).sock.writes.Load()
		return nil
	})
	return n, err
}

// RideFreeingStatement is the statement of a FreeRide alone: its WITH
// entries (the appointment's reservation deleted, the waitlist probed for
// its time) and the columns it selects, with its values as PostgreSQL
// literals, for a look at its plan.
func RideFreeingStatement(accountID, appointmentID string, now time.Time) (string, []string) {
	f := &FreeRide{accountID: accountID, appointmentID: appointmentID, probe: OpeningProbe{ID: "opn_plan", Now: now}}
	var a sqlArgs
	entries, err := f.entries(context.Background(), &a)
	if err != nil {
		panic(err) // no guard: nothing can fail
	}
	q := `WITH ` + entries + ` SELECT ` + rideColumns
	lits := make([]string, len(a))
	for i, v := range a {
		lits[i] = literal(v)
	}
	return q, lits
}

// OpeningWantedStatements are barberd_opening_wanted's two queries
// (openingReached, openingWanted) as statements of their own, the
// function's arguments as typed parameters, as its PL/pgSQL prepares
// them, with those arguments as PostgreSQL literals: a half hour of
// barber brb_1 of acc_1 from from, probed at now, beside a reservation
// of another barber the statement writes.
func OpeningWantedStatements(from, now time.Time) (reached string, reachedArgs []string, wanted string, wantedArgs []string) {
	args, param := literalParams()
	to := from.Add(30 * time.Minute)
	reached = `SELECT ` + openingReached(param("acc_1"), param(from), param(to))
	reachedArgs = *args
	args, param = literalParams()
	wanted = `SELECT ` + openingWanted(param("acc_1"), param("brb_1"), param(from), param(to), param(now),
		param("brb_2"), param(to.Add(time.Hour)), param(to.Add(2*time.Hour)))
	return reached, reachedArgs, wanted, *args
}

// VersionedScheduleStatement is VersionedScheduleRows' statement on
// PostgreSQL for ctx's account, with its values as typed parameters, as
// the statement cache prepares it, and those values as literals.
func VersionedScheduleStatement(ctx context.Context, unitID string, barberIDs []string, weekdays []int, from, to, now time.Time) (string, []string, error) {
	args, param := literalParams()
	q, err := scheduleQuery(ctx, param, dialect.Postgres, unitID, barberIDs, weekdays, from, to, now, true)
	return q, *args, err
}
