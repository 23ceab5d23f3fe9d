package store

import (
	"context"
	"database/sql/driver"

	"github.com/lib/pq"
)

// With binary_parameters=yes lib/pq sends a query in one round trip, but it
// sends []byte arguments in binary form, which jsonb columns (ent's JSON
// fields) refuse. textConnector hands lib/pq every []byte argument as text
// instead; barberd has no bytea columns, so nothing is lost.
type textConnector struct{ driver.Connector }

// pqConn is everything lib/pq's connection implements that database/sql
// looks for.
type pqConn interface {
	driver.Conn
	driver.QueryerContext
	driver.ExecerContext
	driver.ConnBeginTx
	driver.ConnPrepareContext
	driver.Pinger
	driver.SessionResetter
	driver.Validator
	driver.NamedValueChecker
}

type textConn struct{ pqConn }

func newTextConnector(dsn string) (driver.Connector, error) {
	c, err := pq.NewConnector(dsn)
	if err != nil {
		return nil, err
	}
	return textConnector{c}, nil
}

func (c textConnector) Connect(ctx context.Context) (driver.Conn, error) {
	cn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return textConn{cn.(pqConn)}, nil
}

func (c textConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	return c.pqConn.QueryContext(ctx, query, asText(args))
}

func (c textConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	return c.pqConn.ExecContext(ctx, query, asText(args))
}

func asText(args []driver.NamedValue) []driver.NamedValue {
	for i, a := range args {
		if b, ok := a.Value.([]byte); ok {
			args[i].Value = string(b)
		}
	}
	return args
}
