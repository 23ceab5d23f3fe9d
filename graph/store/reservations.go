package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"slices"
	"time"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"

	"barberd/ent"
	"barberd/ent/delivery"
	"barberd/ent/webhookdelivery"
)

// The statements that free a barber's time: each deletes reservations and
// says, in the same round trip, whose time they held and when (DELETE ...
// RETURNING, which both databases run). Why not ent: its delete returns
// only a count, so saying what was freed would cost a select before every
// delete, on every cancel and on every create (which frees the barber's
// expired holds first).

// Reservation is a reservation a statement removed: the barber's time it
// held (buffer included) and the hold or appointment it held it for.
type Reservation struct {
	AccountID, BarberID string
	StartsAt, EndsAt    time.Time
	HoldID              *string
	AppointmentID       *string
}

// DeleteAppointmentReservation deletes an appointment's reservation, if it
// has one (an appointment that ended over an hour ago has none left).
func DeleteAppointmentReservation(ctx context.Context, c Queryer, appointmentID string) ([]Reservation, error) {
	var a sqlArgs
	return deleteReservations(ctx, c, `appointment_id = `+a.add(appointmentID), a)
}

// MoveAppointmentReservation replaces an appointment's reservation, if it
// has one, with r (r.AppointmentID names the appointment) and returns what
// the old one held. On PostgreSQL it is one statement, the old row deleted
// before the new one is inserted, so that a move onto time that overlaps
// the old does not collide with it; elsewhere two.
func (db *DB) MoveAppointmentReservation(ctx context.Context, tx *ent.Tx, r Reserve) ([]Reservation, error) {
	if db.Dialect != dialect.Postgres {
		old, err := DeleteAppointmentReservation(ctx, tx, *r.AppointmentID)
		if err != nil {
			return nil, err
		}
		return old, createReservation(ctx, tx, r)
	}
	var a sqlArgs
	where := `appointment_id = ` + a.add(*r.AppointmentID)
	acct, err := tenantFilter(ctx, a.add, "")
	if err != nil {
		return nil, err
	}
	q := `WITH old AS (` + deleteReservationsQuery(where+acct) + `),
moved AS (` + insertReservation(&a, r, "old") + `)
SELECT * FROM old`
	return queryRows(ctx, tx, q, a, scanReservations)
}

// DeleteHoldReservation deletes an active hold's reservation.
func DeleteHoldReservation(ctx context.Context, c Queryer, holdID string) ([]Reservation, error) {
	var a sqlArgs
	return deleteReservations(ctx, c, `hold_id = `+a.add(holdID), a)
}

// DeleteExpiredReservations deletes a barber's reservations of holds
// expired at now. It reads them by the index of holds' reservations
// (reservation_barber_id_expires_at): nothing expired costs an index
// lookup, however many appointments and live holds the barber has.
func DeleteExpiredReservations(ctx context.Context, c Queryer, barberID string, now time.Time) ([]Reservation, error) {
	var a sqlArgs
	q, err := expiredQuery(ctx, a.add, barberID, now, "")
	if err != nil {
		return nil, err
	}
	return queryRows(ctx, c, q, a, scanReservations)
}

// expiredQuery is DeleteExpiredReservations' statement, its values named
// by bind, with also (conditions after AND, or "") on the rows it
// deletes. expires_at <= now implies expires_at IS NOT NULL, the index's
// predicate, so the planner may use it on any plan.
func expiredQuery(ctx context.Context, bind func(any) string, barberID string, now time.Time, also string) (string, error) {
	where := `barber_id = ` + bind(barberID) + ` AND expires_at <= ` + bind(now)
	acct, err := tenantFilter(ctx, bind, "")
	return deleteReservationsQuery(where + acct + also), err
}

// DeleteEndedReservations deletes a barber's reservations of appointments
// that ended before the given instant.
func DeleteEndedReservations(ctx context.Context, c Queryer, barberID string, before time.Time) ([]Reservation, error) {
	var a sqlArgs
	return deleteReservations(ctx, c, `barber_id = `+a.add(barberID)+` AND appointment_id IS NOT NULL AND ends_at < `+a.add(before), a)
}

func deleteReservations(ctx context.Context, c Queryer, where string, a sqlArgs) ([]Reservation, error) {
	acct, err := tenantFilter(ctx, a.add, "")
	if err != nil {
		return nil, err
	}
	return queryRows(ctx, c, deleteReservationsQuery(where+acct), a, scanReservations)
}

// deleteReservationsQuery deletes the reservations that match where and
// returns what they held.
func deleteReservationsQuery(where string) string {
	return `DELETE FROM reservations WHERE ` + where + `
RETURNING ` + reservationColumns
}

// scanReservations reads the rows (a result set, not closed) of deleteReservationsQuery.
func scanReservations(rows *sql.Rows) ([]Reservation, error) {
	var out []Reservation
	for rows.Next() {
		r, err := scanReservation(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// reservationColumns are the columns of a reservation that
// scanReservation reads.
const reservationColumns = `account_id, barber_id, starts_at, ends_at, hold_id, appointment_id`

// scanReservation reads a row's first columns into lead, then a
// reservation's (reservationColumns).
func scanReservation(rows *sql.Rows, lead ...any) (Reservation, error) {
	var r Reservation
	var hold, appt sql.NullString
	if err := rows.Scan(append(lead, &r.AccountID, &r.BarberID, &r.StartsAt, &r.EndsAt, &hold, &appt)...); err != nil {
		return r, err
	}
	r.StartsAt, r.EndsAt = r.StartsAt.UTC(), r.EndsAt.UTC()
	if hold.Valid {
		r.HoldID = &hold.String
	}
	if appt.Valid {
		r.AppointmentID = &appt.String
	}
	return r, nil
}

// SerialWrites reports whether the database runs one write transaction at
// a time (SQLite's immediate transactions), so what a writer counts at its
// start stays true until it commits; PostgreSQL's writers run side by side
// and count again under a row lock.
func SerialWrites(dia string) bool { return dia != dialect.Postgres }

// SkipLocked makes a query claim the rows it reads until the transaction
// ends, passing over rows another transaction claimed (FOR UPDATE SKIP
// LOCKED on PostgreSQL); on SQLite, whose write transactions are serial,
// the query stays as it is.
func SkipLocked[Q interface{ ForUpdate(...entsql.LockOption) Q }](dia string, q Q) Q {
	if dia == dialect.Postgres {
		return q.ForUpdate(entsql.WithLockAction(entsql.SkipLocked))
	}
	return q
}

// FedKeys is how many keys' feed rows a notification's statement inserts
// itself on PostgreSQL at most (an account has a few keys: a chatbot's, a
// CRM's, a dashboard's); Notify inserts the rest of an account with more.
const FedKeys = 8

// Room is how many deliveries of each kind a notification's statement
// makes ids for, so inserts itself on PostgreSQL: to keys' feeds and to
// webhook endpoints. What it leaves, Notify inserts after it. The caller
// sizes it by what the account's last notification was owed (Owed.Room):
// ids made for deliveries nobody is owed cost a booking their making and
// their sending for nothing.
type Room struct{ Keys, Webhooks int }

// Room is the room that fits these deliveries, at most FedKeys feeds and
// maxEndpoints webhooks.
func (o Owed) Room(maxEndpoints int) Room {
	return Room{Keys: min(len(o.Keys), FedKeys), Webhooks: min(len(o.Endpoints), maxEndpoints)}
}

// Note is a notification to write (Notify, InsertNotification): ent's row
// for every column but the JSON ones, which come as the JSON they store,
// encoded once from the view they show. The row's own Appointment and
// Offer are not read: a map between the view and the column cost every
// booking a decode and a second encode.
type Note struct {
	*ent.Notification
	Appointment, Offer json.RawMessage // nil: NULL
}

// Notify inserts a notification with InsertNotification and every delivery
// it is owed: the feed rows of the keys and the webhook deliveries (due at
// once) the statement left to it, and says to whom it is owed. On
// PostgreSQL that is one statement while the deliveries owed fit in room;
// on SQLite one more for each kind of delivery owed.
func Notify(ctx context.Context, tx *ent.Tx, dia string, n Note, readScope string, room Room) (Owed, error) {
	var ids DeliveryIDs // of the deliveries the statement inserts
	if dia == dialect.Postgres {
		ids.Keys, ids.Webhooks = make([]string, room.Keys), make([]string, room.Webhooks)
		for i := range ids.Keys {
			ids.Keys[i] = delivery.DefaultID()
		}
		for i := range ids.Webhooks {
			ids.Webhooks[i] = webhookdelivery.DefaultID()
		}
	}
	owed, err := InsertNotification(ctx, tx, dia, n, readScope, ids)
	if err != nil {
		return owed, err
	}
	var ds []*ent.DeliveryCreate
	for _, k := range owed.Keys {
		if _, fed := slices.BinarySearch(owed.Fed, k); !fed {
			ds = append(ds, tx.Delivery.Create().SetAccountID(n.AccountID).SetAPIKeyID(k).SetNotificationID(n.ID))
		}
	}
	if len(ds) > 0 {
		if err := tx.Delivery.CreateBulk(ds...).Exec(ctx); err != nil {
			return owed, err
		}
	}
	var ws []*ent.WebhookDeliveryCreate
	for _, e := range owed.Endpoints {
		if _, queued := slices.BinarySearch(owed.Queued, e); !queued {
			ws = append(ws, tx.WebhookDelivery.Create().SetAccountID(n.AccountID).SetEndpointID(e).
				SetNotificationID(n.ID).SetCreatedAt(n.CreatedAt).SetNextAttemptAt(n.CreatedAt))
		}
	}
	if len(ws) > 0 {
		return owed, tx.WebhookDelivery.CreateBulk(ws...).Exec(ctx)
	}
	return owed, nil
}
