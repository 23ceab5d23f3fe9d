package store

import (
	"time"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"

	"barberd/ent/delivery"
	"barberd/ent/notification"
)

// A key's poll of its notifications (GET /notifications/pending) takes
// them off its feed: on PostgreSQL one statement claims the key's oldest
// pending deliveries and reads their notifications, committed alone,
// where a transaction sent four round trips (the deliveries, their
// notifications, the update, COMMIT). The deliveries are taken FOR UPDATE
// SKIP LOCKED and updated only while still pending, so two polls at once
// never take the same one.

// ClaimsInOne reports whether ClaimPending's one statement is there
// (PostgreSQL; SQLite has no UPDATE in a WITH).
func ClaimsInOne(dia string) bool { return dia == dialect.Postgres }

// ClaimPending is the modifier of a query of notifications (ordered by id)
// that makes it the statement that claims, at now, the oldest n pending
// deliveries of the key keyID of account accountID and reads their
// notifications. PostgreSQL's (ClaimsInOne); send it outside a
// transaction, or in one of its own.
func ClaimPending(keyID, accountID string, n int, now time.Time) func(*entsql.Selector) {
	claim := entsql.ExprFunc(func(b *entsql.Builder) {
		b.WriteString(`WITH claimed AS (UPDATE ` + delivery.Table + ` SET ` + delivery.FieldDeliveredAt + ` = `).Arg(now).
			WriteString(` WHERE ` + delivery.FieldID + ` IN (SELECT ` + delivery.FieldID + ` FROM ` + delivery.Table +
				` WHERE ` + delivery.FieldAPIKeyID + ` = `).Arg(keyID).
			WriteString(` AND ` + delivery.FieldAccountID + ` = `).Arg(accountID).
			WriteString(` AND ` + delivery.FieldDeliveredAt + ` IS NULL ORDER BY ` + delivery.FieldNotificationID + ` LIMIT `).Arg(n).
			WriteString(` FOR UPDATE SKIP LOCKED) AND ` + delivery.FieldDeliveredAt + ` IS NULL RETURNING ` + delivery.FieldNotificationID + `)`)
	})
	return func(s *entsql.Selector) {
		c := entsql.Table("claimed")
		s.Prefix(claim).Join(c).On(s.C(notification.FieldID), c.C(delivery.FieldNotificationID))
	}
}
