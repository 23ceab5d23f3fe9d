package store

import (
	"context"
	"database/sql"
	"fmt"

	"entgo.io/ent/dialect"

	"barberd/ent/customer"
)

// Every booking and every waitlist entry upserts the account's customer
// record of its client's phone: one statement, which on PostgreSQL a
// create sends in the WITH of its barber's lock, or of its unlocked read
// of the barber's day when it books under a guard (RideCustomer), one
// round trip fewer. Why not ent's upsert: its statement can only be sent
// alone.

// Customer is a client as a booking gives it, for the account's record.
type Customer struct {
	AccountID, Name, Phone string
	Email                  *string // nil keeps the record's e-mail
}

// customerQuery is the upsert of c, its values named by bind, returning
// the record's id: a new record, or the phone's record with its name (and
// e-mail, when c has one) updated. It checks c as ent's create would.
func customerQuery(bind func(any) string, c Customer) (string, error) {
	email := ""
	if c.Email != nil {
		email = *c.Email
		if err := customer.EmailValidator(email); err != nil {
			return "", fmt.Errorf("customer email: %w", err)
		}
	}
	for _, f := range []struct {
		name, value string
		check       func(string) error
	}{{"account_id", c.AccountID, customer.AccountIDValidator}, {"name", c.Name, customer.NameValidator}, {"phone", c.Phone, customer.PhoneValidator}} {
		if err := f.check(f.value); err != nil {
			return "", fmt.Errorf("customer %s: %w", f.name, err)
		}
	}
	at := bind(customer.DefaultCreatedAt()) // the time ent's create would record
	return `INSERT INTO customers (id, account_id, created_at, updated_at, name, phone, email)
VALUES (` + bind(customer.DefaultID()) + `, ` + bind(c.AccountID) + `, ` + at + `, ` + at + `, ` + bind(c.Name) + `, ` + bind(c.Phone) + `, NULLIF(` + bind(email) + `, ''))
ON CONFLICT (account_id, phone) DO UPDATE SET name = excluded.name, updated_at = excluded.updated_at,
email = COALESCE(excluded.email, customers.email)
RETURNING id`, nil
}

// UpsertCustomer writes the account's record of c and returns its id.
func UpsertCustomer(ctx context.Context, q Queryer, c Customer) (string, error) {
	var a sqlArgs
	query, err := customerQuery(a.add, c)
	if err != nil {
		return "", err
	}
	var id string
	return id, queryRow(ctx, q, "customer", query, a, &id)
}

// Riding is a customer's upsert that the next barber lock of its
// transaction (LockedSchedule), or the next read of a barber's day
// (EachScheduleRow), sends in its own statement, on PostgreSQL: before the
// lock, so writers take a customer's record before a barber, whichever way
// the upsert goes.
type Riding struct {
	c  Customer
	id string // once written
}

// ridingKey is the context key of the *Riding a lock or a read takes.
type ridingKey struct{}

// RideCustomer returns a context under which the next barber lock or day
// read upserts c (PostgreSQL), and the Riding that ID reads the record's
// id from. Where none took it (SQLite, or none came), ID sends it alone.
func RideCustomer(ctx context.Context, dia string, c Customer) (context.Context, *Riding) {
	r := &Riding{c: c}
	if dia != dialect.Postgres {
		return ctx, r
	}
	return context.WithValue(ctx, ridingKey{}, r), r
}

// riding is the upsert of ctx a lock or a read is still to send, or nil.
func riding(ctx context.Context) *Riding {
	if r, _ := ctx.Value(ridingKey{}).(*Riding); r != nil && r.id == "" {
		return r
	}
	return nil
}

// ID is the customer record's id: the one the lock's or the read's
// statement returned, or, when none took the upsert, the one it returns
// sent alone on q.
func (r *Riding) ID(ctx context.Context, q Queryer) (string, error) {
	if r.id != "" {
		return r.id, nil
	}
	id, err := UpsertCustomer(ctx, q, r.c)
	r.id = id
	return id, err
}

// lockQuery is the statement of LockedSchedule's lock, its values named by
// bind (which also makes the rest of the transaction run generic plans):
// with a riding upsert, the upsert in its WITH, which the condition on its
// id runs before the barber's row is locked, and its id as the row's third
// column.
func (r *Riding) lockQuery(ctx context.Context, bind func(any) string, acct, barberID string) (string, error) {
	where := ` FROM barbers WHERE id = ` + bind(barberID) + acct
	if r == nil {
		if k := ridingKeyHolds(ctx); k != nil {
			return k.lockQuery(ctx, bind, where)
		}
		return `SELECT id, ` + genericPlans + where + ` FOR UPDATE`, nil
	}
	upsert, err := customerQuery(bind, r.c)
	if err != nil {
		return "", err
	}
	return `WITH customer AS (` + upsert + `)
SELECT id, ` + genericPlans + `, (SELECT id FROM customer)` + where + ` AND (SELECT id FROM customer) IS NOT NULL FOR UPDATE`, nil
}

// scanLock reads the rows of lockQuery and fails with sql.ErrNoRows when
// there are none (found); with a riding upsert, it keeps the record's id.
func (r *Riding) scanLock(ctx context.Context, rows *sql.Rows) error {
	if r == nil {
		if k := ridingKeyHolds(ctx); k != nil {
			return k.scanLock(rows)
		}
		return found(rows, nil)
	}
	return found(rows, func() error {
		var id, lock string
		return rows.Scan(&id, &lock, &r.id)
	})
}
