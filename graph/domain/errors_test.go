package domain_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/lib/pq"

	"barberd/graph/domain"
)

// DomainError is the one mapping of failures to codes: what a client sees
// for an error that no resolver turned into a domain error (GraphQL's
// generated resolvers return ent's errors as they are).
func TestDomainError(t *testing.T) {
	slot := domain.Errorf(domain.CodeSlotUnavailable, "taken")
	for _, c := range []struct {
		err  error
		want string
	}{
		{slot, domain.CodeSlotUnavailable},
		{fmt.Errorf("create: %w", slot), domain.CodeSlotUnavailable},
		{io.EOF, domain.CodeUnavailable},
		{fmt.Errorf("ent: %w", io.ErrUnexpectedEOF), domain.CodeUnavailable},
		{&pq.Error{Code: "40001"}, domain.CodeUnavailable},
		{context.DeadlineExceeded, domain.CodeUnavailable},
		{context.Canceled, domain.CodeCanceled},
		{&pq.Error{Code: "22021"}, domain.CodeInternal},
		{errors.New("panic: nil map"), domain.CodeInternal},
	} {
		e := domain.DomainError(c.err)
		if e.Code != c.want {
			t.Errorf("DomainError(%v) = %s, want %s", c.err, e.Code, c.want)
		}
		if c.want == domain.CodeInternal && e.Message != "Something went wrong on our side." {
			t.Errorf("DomainError(%v) says %q", c.err, e.Message)
		}
	}
}
