package gqlserver

import (
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/parser"
	"github.com/vektah/gqlparser/v2/validator"

	"barberd/graph"
)

// OperationCost parses and validates a document as the handler does and
// returns the cost and depth of its first operation, or the parse or
// validation errors, or the measure's own error.
func OperationCost(query string, vars map[string]any) (cost, depth int, err error) {
	schema := publicSchema(graph.NewExecutableSchema(graph.Config{}).Schema())
	doc, perr := parser.ParseQueryWithTokenLimit(&ast.Source{Input: query}, maxTokens)
	if perr != nil {
		return 0, 0, perr
	}
	if errs := validator.ValidateWithRules(schema, doc, validationRules()); len(errs) > 0 {
		return 0, 0, gqlerror.List(errs)
	}
	limits := graph.DefaultLimits
	l := operationLimits{sizes: measureSchema(schema), limits: &limits}
	m, err := l.measure(doc.Operations[0], vars)
	return m.cost, m.depth, err
}
