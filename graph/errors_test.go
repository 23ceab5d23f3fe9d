package graph_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/lib/pq"

	"barberd/graph"
)

// DomainError is the one mapping of failures to codes: what a client sees
// for an error that no resolver turned into a domain error (GraphQL's
// generated resolvers return ent's errors as they are).
func TestDomainError(t *testing.T) {
	slot := graph.Errorf(graph.CodeSlotUnavailable, "taken")
	for _, c := range []struct {
		err  error
		want string
	}{
		{slot, graph.CodeSlotUnavailable},
		{fmt.Errorf("create: %w", slot), graph.CodeSlotUnavailable},
		{io.EOF, graph.CodeUnavailable},
		{fmt.Errorf("ent: %w", io.ErrUnexpectedEOF), graph.CodeUnavailable},
		{&pq.Error{Code: "40001"}, graph.CodeUnavailable},
		{context.DeadlineExceeded, graph.CodeUnavailable},
		{context.Canceled, graph.CodeCanceled},
		{&pq.Error{Code: "22021"}, graph.CodeInternal},
		{errors.New("panic: nil map"), graph.CodeInternal},
	} {
		e := graph.DomainError(c.err)
		if e.Code != c.want {
			t.Errorf("DomainError(%v) = %s, want %s", c.err, e.Code, c.want)
		}
		if c.want == graph.CodeInternal && e.Message != "Something went wrong on our side." {
			t.Errorf("DomainError(%v) says %q", c.err, e.Message)
		}
	}
}
