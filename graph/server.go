package graph

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"runtime/debug"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"barberd/graph/fresh"
)

// NewHandler returns the GraphQL HTTP handler. Authentication happens
// before it (the API key becomes the context's viewer); every error carries
// its domain code in extensions.code.
//
// Before anything runs, with or without a key, a request is refused with
// validation_failed when its text is not clean (cleantext.go), its document
// is too large to validate cheaply (cost_shape.go), or its operation costs
// too much, nests too deep or asks for too large a page (cost.go).
func NewHandler(r *Resolver) *handler.Server {
	schema := publicSchema(NewExecutableSchema(Config{}).Schema())
	srv := handler.New(NewExecutableSchema(Config{Schema: schema, Resolvers: r}))
	srv.AddTransport(transport.Options{})
	srv.AddTransport(cleanGET{})
	srv.AddTransport(cleanPOST{})
	srv.SetParserTokenLimit(maxTokens)
	srv.SetValidationRulesFn(validationRules)
	srv.SetDisableSuggestion(true)
	srv.Use(documentLimits{})
	srv.Use(extension.Introspection{})
	srv.Use(operationLimits{sizes: measureSchema(schema), limits: &r.Limits})
	srv.Use(cleanText{})
	srv.Use(settleMutations{r})
	srv.SetErrorPresenter(func(ctx context.Context, err error) *gqlerror.Error {
		return r.presentError(ctx, err)
	})
	srv.SetRecoverFunc(func(ctx context.Context, v any) error {
		r.Log.ErrorContext(ctx, "panic in resolver", "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
		return &Error{Code: CodeInternal, Message: "Something went wrong on our side.", Err: fmt.Errorf("panic: %v", v)}
	})
	return srv
}

// generatorDirectives are gqlgen's, for code generation only.
var generatorDirectives = []string{"goModel", "goField", "goTag", "goExtraField", "goEnum"}

// publicSchema is the schema without gqlgen's generator directives, which
// introspection would otherwise show. They apply to type definitions only,
// so no operation can use them.
func publicSchema(s *ast.Schema) *ast.Schema {
	public := *s
	public.Directives = maps.Clone(s.Directives)
	for _, name := range generatorDirectives {
		delete(public.Directives, name)
	}
	return &public
}

// settleMutations is the gqlgen handler extension that settles a mutation
// before its response goes out (package fresh).
type settleMutations struct{ r *Resolver }

var _ interface {
	graphql.HandlerExtension
	graphql.ResponseInterceptor
} = settleMutations{}

func (settleMutations) ExtensionName() string { return "SettleWrites" }

func (settleMutations) Validate(graphql.ExecutableSchema) error { return nil }

func (s settleMutations) InterceptResponse(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	if !graphql.HasOperationContext(ctx) {
		return next(ctx)
	}
	if op := graphql.GetOperationContext(ctx).Operation; op == nil || op.Operation != ast.Mutation {
		return next(ctx)
	}
	return fresh.Answer(ctx, s.r.FreshnessWindow, next)
}

// presentError is the one GraphQL error presenter: a domain error keeps its
// safe message and puts its code (and bad fields, and alternatives) in
// extensions; anything else is logged and shown as internal_error.
func (r *Resolver) presentError(ctx context.Context, err error) *gqlerror.Error {
	gqlErr := graphql.DefaultErrorPresenter(ctx, err)
	e, ok := AsError(err)
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
			gqlErr.Extensions["code"] = CodeValidationFailed
			return gqlErr
		case badArgument(ctx):
			// The client's argument could not be read (a malformed cursor, say).
			e = &Error{Code: CodeValidationFailed, Message: gqlErr.Message}
		default:
			// ent's generated resolvers (pages, edges) return store errors
			// as they come: classified here as everywhere else.
			e = DomainError(err)
		}
	}
	if e.Code == CodeInternal || e.Code == CodeUnavailable {
		r.Log.ErrorContext(ctx, "graphql operation failed", "code", e.Code, "err", e.Err)
	}
	gqlErr.Message = e.Message
	if e.Code == CodeInternal {
		gqlErr.Message = "Something went wrong on our side."
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
	return gqlErr
}

// badArgument reports whether the error being presented arose while the
// field's arguments were read: gqlgen then has not set them, although the
// query gave some. Resolvers only ever run with their arguments set.
func badArgument(ctx context.Context) bool {
	fc := graphql.GetFieldContext(ctx)
	return fc != nil && fc.Args == nil && len(fc.Field.Arguments) > 0
}

// AuthError renders an authentication failure in GraphQL's response form.
func AuthError(err error) *gqlerror.Error {
	e, ok := AsError(err)
	if !ok {
		e = &Error{Code: CodeInternal, Message: "Something went wrong on our side."}
	}
	return &gqlerror.Error{Message: e.Message, Extensions: map[string]any{"code": e.Code}}
}
