package gqlserver

import (
	"context"
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

	"barberd/graph"
	"barberd/graph/domain"
	"barberd/graph/fresh"
	"barberd/graph/quota"
)

// NewHandler returns the GraphQL HTTP handler over r. Authentication
// happens before it (the API key becomes the context's viewer); every error
// carries its domain code in extensions.code.
func NewHandler(r *graph.Resolver) *handler.Server {
	settings := r.Settings()
	schema := publicSchema(graph.NewExecutableSchema(graph.Config{}).Schema())
	srv := handler.New(graph.NewExecutableSchema(graph.Config{Schema: schema, Resolvers: r}))
	srv.AddTransport(transport.Options{})
	srv.AddTransport(cleanGET{})
	srv.AddTransport(cleanPOST{})
	srv.SetParserTokenLimit(maxTokens)
	srv.SetValidationRulesFn(validationRules)
	srv.SetDisableSuggestion(true)
	srv.Use(documentLimits{})
	srv.Use(extension.Introspection{})
	srv.Use(operationLimits{sizes: measureSchema(schema), limits: &settings.Limits})
	srv.Use(cleanText{})
	srv.Use(settleMutations{settings.FreshnessWindow})
	srv.Use(unitZonesPerRootField{})
	srv.Use(slotsPerOperation{settings.Limits.Slots() / slotShare})
	srv.SetErrorPresenter(func(ctx context.Context, err error) *gqlerror.Error {
		return presentError(ctx, settings.Log, err)
	})
	srv.SetRecoverFunc(func(ctx context.Context, v any) error {
		settings.Log.ErrorContext(ctx, "panic in resolver", "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
		return domain.Internal(fmt.Errorf("panic: %v", v))
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
type settleMutations struct{ window time.Duration }

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
	return fresh.Answer(ctx, s.window, next)
}

// unitZonesPerRootField is the gqlgen handler extension that gives each
// root field its own read of the account's unit zones
// (graph.WithUnitZones), so the local times of a list of appointments cost
// one query, not one per appointment.
type unitZonesPerRootField struct{}

var _ interface {
	graphql.HandlerExtension
	graphql.RootFieldInterceptor
} = unitZonesPerRootField{}

func (unitZonesPerRootField) ExtensionName() string { return "UnitZones" }

func (unitZonesPerRootField) Validate(graphql.ExecutableSchema) error { return nil }

func (unitZonesPerRootField) InterceptRootField(ctx context.Context, next graphql.RootResolver) graphql.Marshaler {
	return next(graph.WithUnitZones(ctx))
}

// slotsPerOperation is the gqlgen handler extension that gives all the
// availability answers of one operation one budget of slots
// (quota.WithPool), however many root fields ask for them.
type slotsPerOperation struct{ slots int }

// slotShare divides graph.Limits.MaxSlots for a GraphQL operation: gqlgen
// builds an answer whole, at about 1.5 kB of heap a slot (five times
// REST's), so 25,000 slots (by default) stay under 40 MB.
const slotShare = 4

var _ interface {
	graphql.HandlerExtension
	graphql.OperationInterceptor
} = slotsPerOperation{}

func (slotsPerOperation) ExtensionName() string { return "SlotsPerOperation" }

func (slotsPerOperation) Validate(graphql.ExecutableSchema) error { return nil }

func (s slotsPerOperation) InterceptOperation(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	return next(quota.WithPool(ctx, s.slots))
}
