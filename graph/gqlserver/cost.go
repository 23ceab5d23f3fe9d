package gqlserver

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"barberd/graph/admin"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"barberd/graph"
	"barberd/graph/domain"
	"barberd/graph/paging"
)

// The cost and its bounds (see the package doc, "The cost of an operation").
const (
	// MaxCost is the most one operation may cost.
	MaxCost = 50_000
	// queryCost is the extra cost of a field that runs a database query of
	// its own.
	queryCost = 1_000
	// listItems is how many items a list without a page counts as: a
	// barbershop's unit has fewer barbers, a barber fewer services.
	listItems = 20
	// daySlots is how many slots a day's availability counts as: two
	// barbers' full day of 15-minute slots is about 130. What a day really
	// holds is bounded by the unit's size in graph (cost.go), where an
	// operation's answers share a quarter of --max-slots
	// (slotsPerOperation).
	daySlots = 200
	// maxDepth bounds how deeply the fields of one operation nest: the
	// schema's edges go round (unit → barbers → units → ...). Introspection
	// does not count; its nesting is bounded by validation.
	maxDepth = 12
	// maxFilterSize bounds the conditions of one where filter.
	maxFilterSize = 500
)

// costCap is where costs stop growing, far above MaxCost and far below
// overflow.
const costCap = 1 << 40

// operationLimits is the gqlgen handler extension that measures an
// operation before anything runs. Errors: validation_failed (too costly,
// too deep, a page over graph.MaxPageSize, more than graph.MaxPageSize
// ids, a where filter of more than maxFilterSize conditions).
type operationLimits struct {
	sizes  introspectionSizes
	limits *graph.Limits // the resolver's, for the notifications limit
}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
} = operationLimits{}

func (operationLimits) ExtensionName() string { return "OperationLimits" }

func (operationLimits) Validate(graphql.ExecutableSchema) error { return nil }

func (l operationLimits) MutateOperationContext(_ context.Context, oc *graphql.OperationContext) *gqlerror.Error {
	if oc.Operation == nil {
		return nil
	}
	m, err := l.measure(oc.Operation, oc.Variables)
	if err != nil {
		return refuse(err)
	}
	if m.depth > maxDepth {
		return refuse(domain.Errorf(domain.CodeValidationFailed, "The operation nests fields %d levels deep; at most %d are allowed.", m.depth, maxDepth))
	}
	if m.cost > MaxCost {
		return refuse(domain.Errorf(domain.CodeValidationFailed, "The operation's cost is %s; at most %d is allowed. Ask for smaller pages (first, last), fewer nested lists or fewer root fields.", costString(m.cost), MaxCost))
	}
	return nil
}

// refuse turns a domain error into the error of a request refused before
// it ran: gqlgen answers it like a document that failed validation.
func refuse(err error) *gqlerror.Error {
	e := &gqlerror.Error{Message: err.Error(), Err: err}
	if de, ok := domain.AsError(err); ok {
		e.Message = de.Message
	}
	errcode.Set(e, errcode.ValidationFailed)
	return e
}

func costString(c int) string {
	if c >= costCap {
		return fmt.Sprintf("over %d", costCap)
	}
	return fmt.Sprint(c)
}

// measure is an operation's cost and depth. Errors: validation_failed (a
// page over graph.MaxPageSize, more than graph.MaxPageSize ids).
func (l operationLimits) measure(op *ast.OperationDefinition, vars map[string]any) (measure, error) {
	w := costWalk{
		sizes:  &l.sizes,
		limits: *l.limits,
		vars:   vars,
		memo:   map[memoKey]measure{},
		active: map[string]bool{},
	}
	m := w.set(op.SelectionSet, scope{})
	return m, w.problems.Err()
}

// measure is what a selection set costs. edges is the cost of one item of
// the edges it selects on a connection, which the connection multiplies
// by its page.
type measure struct {
	cost, edges, depth int
}

func (m *measure) add(o measure) {
	m.cost = addCost(m.cost, o.cost)
	m.edges = addCost(m.edges, o.edges)
	m.depth = max(m.depth, o.depth)
}

func addCost(a, b int) int { return min(a+b, costCap) }

func mulCost(a, b int) int {
	if a == 0 || b == 0 {
		return 0
	}
	if a > costCap/b {
		return costCap
	}
	return a * b
}

// costWalk measures one operation. A fragment's measure depends only on
// the scope it is spread in, so each is measured once per scope: the walk
// is linear in the document however often fragments spread each other.
type costWalk struct {
	sizes    *introspectionSizes
	limits   graph.Limits
	vars     map[string]any
	memo     map[memoKey]measure
	active   map[string]bool // fragments being measured; validation refuses cycles
	problems domain.Problems
}

type memoKey struct {
	fragment string
	scope    scope
}

func (w *costWalk) set(set ast.SelectionSet, sc scope) measure {
	var m measure
	for _, sel := range set {
		switch sel := sel.(type) {
		case *ast.Field:
			if w.included(sel.Directives) {
				m.add(w.field(sel, sc))
			}
		case *ast.InlineFragment:
			if w.included(sel.Directives) {
				m.add(w.set(sel.SelectionSet, sc))
			}
		case *ast.FragmentSpread:
			if w.included(sel.Directives) {
				m.add(w.fragment(sel, sc))
			}
		}
	}
	return m
}

func (w *costWalk) fragment(s *ast.FragmentSpread, sc scope) measure {
	if s.Definition == nil || w.active[s.Name] {
		return measure{}
	}
	k := memoKey{s.Name, sc}
	if m, ok := w.memo[k]; ok {
		return m
	}
	w.active[s.Name] = true
	m := w.set(s.Definition.SelectionSet, sc)
	delete(w.active, s.Name)
	w.memo[k] = m
	return m
}

func (w *costWalk) field(f *ast.Field, sc scope) measure {
	switch {
	case f.Name == "__typename":
		return measure{cost: 1}
	case sc.in != data || f.Name == "__schema" || f.Name == "__type":
		n, child, null := w.sizes.list(f.Name, sc)
		if null {
			return measure{cost: 1}
		}
		return measure{cost: addCost(1, mulCost(n, w.set(f.SelectionSet, child).cost))}
	case f.Definition == nil || f.ObjectDefinition == nil:
		return measure{cost: 1} // validation resolves every field it lets through
	}
	w.checkFilter(f)
	sub := w.set(f.SelectionSet, scope{})
	m := measure{cost: 1, depth: 1 + sub.depth}
	parent := f.ObjectDefinition
	switch {
	case isConnection(f.Definition):
		m.cost = addCost(m.cost, addCost(sub.cost, mulCost(w.page(f), sub.edges)))
	case f.Name == "edges" && isConnectionType(parent):
		return measure{cost: 1, edges: sub.cost, depth: m.depth}
	case f.Definition.Type.Elem != nil:
		n, each := w.listSize(f)
		m.cost = addCost(m.cost, mulCost(n, addCost(each, sub.cost)))
	default:
		m.cost = addCost(m.cost, sub.cost)
	}
	if parent.Name == "Query" || parent.Name == "Mutation" ||
		isConnectionType(parent) && (f.Name == "totalCount" || f.Name == "pageInfo") {
		m.cost = addCost(m.cost, queryCost)
	}
	return m
}

// isConnection reports whether a field returns a Relay connection page.
func isConnection(def *ast.FieldDefinition) bool {
	return def.Type.Elem == nil && def.Arguments.ForName("first") != nil &&
		strings.HasSuffix(def.Type.Name(), "Connection")
}

func isConnectionType(t *ast.Definition) bool {
	return strings.HasSuffix(t.Name, "Connection") && t.Fields.ForName("edges") != nil
}

// page is how many items a connection field asks for.
func (w *costWalk) page(f *ast.Field) int {
	n, given := 0, false
	for _, name := range []string{"first", "last"} {
		v, ok := w.intArg(f, name)
		if !ok {
			continue
		}
		given = true
		if v > paging.MaxPageSize {
			w.problem(name, fmt.Sprintf("must be at most %d", paging.MaxPageSize))
		}
		n = max(n, int(min(max(v, 0), paging.MaxPageSize)))
	}
	if !given {
		return paging.DefaultPageSize
	}
	return n
}

// listSize is how many items a list field may hold, and what each costs
// besides its fields.
func (w *costWalk) listSize(f *ast.Field) (n, each int) {
	switch {
	case f.Definition.Arguments.ForName("first") != nil:
		return w.page(f), 0
	case f.Name == "appointmentsByClient":
		return w.limit(f, graph.ClientAppointmentsDefault, graph.ClientAppointmentsMax), 0
	case f.Definition.Arguments.ForName("limit") != nil:
		return w.limit(f, w.limits.NotificationsDefault, w.limits.NotificationsMax), 0
	case f.Name == "days" && f.ObjectDefinition.Name == "AvailabilityRange":
		return domain.MaxRangeDays, 0
	case f.Name == "slots" && f.ObjectDefinition.Name == "Availability":
		return daySlots, 0
	case f.Name == "slots" && f.ObjectDefinition.Name == "NextFreeSlots":
		return domain.MaxNextLimit, 0
	case f.Name == "attempts" && f.ObjectDefinition.Name == "WebhookDelivery":
		return admin.MaxWebhookAttemptsShown, 0
	case f.Name == "webhookEndpoints":
		return admin.MaxWebhookEndpoints, 0
	case f.Name == "nodes":
		ids := 0
		if a := f.Arguments.ForName("ids"); a != nil {
			if v, err := a.Value.Value(w.vars); err == nil {
				if l, ok := v.([]any); ok {
					ids = len(l)
				} else if v != nil {
					ids = 1 // a single id stands for a list of one
				}
			}
		}
		if ids > paging.MaxPageSize {
			w.problem("ids", fmt.Sprintf("must be at most %d ids", paging.MaxPageSize))
		}
		return ids, queryCost
	}
	return listItems, 0
}

// limit is the limit argument of f, within 0..most, or def when it is
// left out.
func (w *costWalk) limit(f *ast.Field, def, most int) int {
	v, ok := w.intArg(f, "limit")
	if !ok {
		return def
	}
	return int(min(max(v, 0), int64(most)))
}

// checkFilter bounds a where filter: SQLite refuses an expression nested
// a thousand deep, as a long chain of or is.
func (w *costWalk) checkFilter(f *ast.Field) {
	a := f.Arguments.ForName("where")
	if a == nil {
		return
	}
	if v, err := a.Value.Value(w.vars); err == nil && filterSize(v) > maxFilterSize {
		w.problem("where", fmt.Sprintf("must hold at most %d conditions", maxFilterSize))
	}
}

// filterSize is how many conditions a where filter holds: each field set,
// each list element, through and, or and not.
func filterSize(v any) int {
	n := 0
	switch v := v.(type) {
	case map[string]any:
		for _, e := range v {
			if e != nil {
				n += 1 + filterSize(e)
			}
		}
	case []any:
		for _, e := range v {
			n += max(1, filterSize(e))
		}
	}
	return n
}

func (w *costWalk) problem(field, msg string) {
	for _, p := range w.problems {
		if p.Field == field {
			return
		}
	}
	w.problems.Add(field, "%s", msg)
}

func (w *costWalk) intArg(f *ast.Field, name string) (int64, bool) {
	a := f.Arguments.ForName(name)
	if a == nil {
		return 0, false
	}
	v, err := a.Value.Value(w.vars)
	if err != nil {
		return 0, false
	}
	return asInt(v)
}

// asInt reads an Int argument: a literal is an int64; a variable is what
// JSON decoding and gqlparser's coercion left of it.
func asInt(v any) (int64, bool) {
	switch n := v.(type) {
	case int64:
		return n, true
	case int:
		return int64(n), true
	case int32:
		return int64(n), true
	case float64:
		if n >= math.MinInt64 && n <= math.MaxInt64 {
			return int64(n), true
		}
	case json.Number:
		i, err := n.Int64()
		return i, err == nil
	}
	return 0, false
}

// included applies @skip and @include as the executor will.
func (w *costWalk) included(dirs ast.DirectiveList) bool {
	if d := dirs.ForName("skip"); d != nil && w.ifArg(d) {
		return false
	}
	if d := dirs.ForName("include"); d != nil && !w.ifArg(d) {
		return false
	}
	return true
}

func (w *costWalk) ifArg(d *ast.Directive) bool {
	a := d.Arguments.ForName("if")
	if a == nil {
		return false
	}
	v, err := a.Value.Value(w.vars)
	b, _ := v.(bool)
	return err == nil && b
}
