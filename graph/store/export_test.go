package store

import (
	"strconv"
	"time"
)

// InsertOpeningStatement is InsertOpening's statement with its values as
// typed parameters, as the statement cache prepares it, and those values
// as PostgreSQL literals.
func InsertOpeningStatement(dia, accountID, barberID string, start, end, now time.Time) (string, []string) {
	var args []string
	param := func(v any) string {
		args = append(args, literal(v))
		return "$" + strconv.Itoa(len(args)) + literalType(v)
	}
	return insertOpeningQuery(dia, param, "opn_plan", accountID, barberID, start, end, now), args
}
