package graph

import (
	"context"
	"fmt"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// maxDepth bounds how deeply the fields of one GraphQL operation nest. The
// schema's edges go round (unit → barbers → units → ...), so without it a
// small query could ask for a huge tree; the complexity limit bounds width,
// this bounds depth.
const maxDepth = 12

// depthLimit is the gqlgen handler extension that refuses, before anything
// runs, an operation nested deeper than max, with code validation_failed.
// Introspection (__schema, __type) does not count: it is bounded by the
// schema itself, and GraphiQL's own introspection query is deep.
type depthLimit struct{ max int }

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
} = depthLimit{}

func (depthLimit) ExtensionName() string { return "DepthLimit" }

func (depthLimit) Validate(graphql.ExecutableSchema) error { return nil }

func (d depthLimit) MutateOperationContext(_ context.Context, oc *graphql.OperationContext) *gqlerror.Error {
	if oc.Operation == nil {
		return nil
	}
	if n := depth(oc.Operation.SelectionSet); n > d.max {
		return &gqlerror.Error{
			Message:    fmt.Sprintf("The operation nests fields %d levels deep; at most %d are allowed.", n, d.max),
			Extensions: map[string]any{"code": CodeValidationFailed},
		}
	}
	return nil
}

// depth is how many levels of fields a selection set nests; fragments add
// no level of their own. Validation has already refused fragment cycles.
func depth(set ast.SelectionSet) int {
	deepest := 0
	for _, sel := range set {
		n := 0
		switch s := sel.(type) {
		case *ast.Field:
			if strings.HasPrefix(s.Name, "__") {
				continue
			}
			n = 1 + depth(s.SelectionSet)
		case *ast.InlineFragment:
			n = depth(s.SelectionSet)
		case *ast.FragmentSpread:
			if s.Definition != nil {
				n = depth(s.Definition.SelectionSet)
			}
		}
		deepest = max(deepest, n)
	}
	return deepest
}
