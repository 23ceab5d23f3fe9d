package gqlserver

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"barberd/graph/domain"
	"barberd/graph/slots"
	"barberd/rest"
)

// presentError is the error presenter of the handler: it classifies err
// (gqlgen's own errors about the query are validation_failed), logs what is
// internal or unavailable to log, and renders the domain error.
func presentError(ctx context.Context, log *slog.Logger, err error) *gqlerror.Error {
	gqlErr := graphql.DefaultErrorPresenter(ctx, err)
	e, ok := domain.AsError(err)
	if !ok {
		var ge *gqlerror.Error
		switch {
		case errors.As(err, &ge) && ge.Unwrap() == nil:
			// gqlgen's own error about the query (syntax, unknown field, too
			// complex): safe to show; in our vocabulary it is a bad request.
			if reason, ok := gqlErr.Extensions["code"]; ok {
				gqlErr.Extensions["reason"] = reason
			}
			if gqlErr.Extensions == nil {
				gqlErr.Extensions = map[string]any{}
			}
			gqlErr.Extensions["code"] = domain.CodeValidationFailed
			return gqlErr
		case badArgument(ctx):
			// The client's argument could not be read (a malformed cursor, say).
			e = &domain.Error{Code: domain.CodeValidationFailed, Message: gqlErr.Message}
		default:
			// ent's generated resolvers (pages, edges) return store errors
			// as they come: classified here as everywhere else.
			e = domain.DomainError(err)
		}
	}
	if e.Code == domain.CodeInternal || e.Code == domain.CodeUnavailable {
		log.ErrorContext(ctx, "graphql operation failed", "code", e.Code, "err", e.Err)
	}
	return render(gqlErr, e)
}

// render is the one GraphQL form of a domain error: gqlErr (which keeps its
// path and locations) with e's safe message, and e's code (and bad fields,
// alternatives, hold cap) in extensions.
func render(gqlErr *gqlerror.Error, e *domain.Error) *gqlerror.Error {
	gqlErr.Message = e.Message
	if e.Code == domain.CodeInternal {
		gqlErr.Message = domain.MessageInternal
	}
	gqlErr.Extensions = map[string]any{"code": e.Code}
	if len(e.Fields) > 0 {
		gqlErr.Extensions["fields"] = e.Fields
	}
	if len(e.Alternatives) > 0 {
		alts := make([]map[string]any, len(e.Alternatives))
		for i, s := range e.Alternatives {
			alts[i] = map[string]any{
				"startsAt": s.StartsAt, "endsAt": s.EndsAt,
				"startsAtUtc": s.StartsAtUtc.Format(time.RFC3339), "endsAtUtc": s.EndsAtUtc.Format(time.RFC3339),
				"barberId": s.BarberID,
			}
		}
		gqlErr.Extensions["alternatives"] = alts
	}
	if e.WaitlistEntryID != "" {
		gqlErr.Extensions["waitlistEntryId"] = e.WaitlistEntryID
	}
	if c := e.HoldCap; c != nil {
		gqlErr.Extensions["activeHolds"], gqlErr.Extensions["activeHoldsMax"] = c.Active, c.Max
		gqlErr.Extensions["oldestHoldId"], gqlErr.Extensions["oldestHoldExpiresAt"] = c.OldestHoldID, slots.UTC(c.OldestExpiresAt)
	}
	return gqlErr
}

// badArgument reports whether the error being presented arose while the
// field's arguments were read: gqlgen then has not set them, although the
// query gave some. Resolvers only ever run with their arguments set.
func badArgument(ctx context.Context) bool {
	fc := graphql.GetFieldContext(ctx)
	return fc != nil && fc.Args == nil && len(fc.Field.Arguments) > 0
}

// WriteError answers a request refused before execution (a bad API key, a
// rate limit, a body too large) in GraphQL's response form, with the HTTP
// status REST gives its code (rest.WriteStatus).
func WriteError(w http.ResponseWriter, _ *http.Request, err error) {
	e := domain.DomainError(err)
	rest.WriteStatus(w, rest.Status(e.Code), "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"errors": gqlerror.List{render(&gqlerror.Error{}, e)}})
}
