package gqlserver

import (
	"context"
	"fmt"

	"barberd/graph/domain"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/lexer"
	"github.com/vektah/gqlparser/v2/validator/core"
	"github.com/vektah/gqlparser/v2/validator/rules"
)

// Bounds of a document before it is parsed and validated (see the package
// doc, "Bounds before the cost").
const (
	maxDocumentBytes    = 64 << 10
	maxTokens           = 10_000
	maxNesting          = 32
	maxSelections       = 5_000
	maxMergePairs       = 5_000
	maxFragments        = 100
	maxWidth            = 100
	maxDirectives       = 5
	maxValidationErrors = 20
)

// documentLimits is the gqlgen handler extension that refuses, before it
// is parsed, a document over maxDocumentBytes, maxTokens or maxNesting.
// Errors: validation_failed.
type documentLimits struct{}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationParameterMutator
} = documentLimits{}

func (documentLimits) ExtensionName() string { return "DocumentLimits" }

func (documentLimits) Validate(graphql.ExecutableSchema) error { return nil }

func (documentLimits) MutateOperationParameters(_ context.Context, params *graphql.RawParams) *gqlerror.Error {
	// gqlparser's coercion of variables is superlinear in their nesting too.
	if nestsDeeper(params.Variables, maxNesting) {
		return refuse(domain.Errorf(domain.CodeValidationFailed, "The variables nest lists and objects more than %d levels deep; at most %d are allowed.", maxNesting, maxNesting))
	}
	if n := len(params.Query); n > maxDocumentBytes {
		return refuse(domain.Errorf(domain.CodeValidationFailed, "The document has %d bytes; at most %d are allowed. Send large inputs as variables.", n, maxDocumentBytes))
	}
	lex := lexer.New(&ast.Source{Input: params.Query})
	for tokens, depth := 0, 0; ; tokens++ {
		tok, err := lex.ReadToken()
		if err != nil || tok.Kind == lexer.EOF {
			return nil // the parser reports a lexical error
		}
		if tokens == maxTokens {
			return refuse(domain.Errorf(domain.CodeValidationFailed, "The document has more than %d tokens; at most %d are allowed.", maxTokens, maxTokens))
		}
		switch tok.Kind {
		case lexer.BraceL, lexer.BracketL:
			if depth++; depth > maxNesting {
				return refuse(domain.Errorf(domain.CodeValidationFailed, "The document nests selections and values more than %d levels deep; at most %d are allowed.", maxNesting, maxNesting))
			}
		case lexer.BraceR, lexer.BracketR:
			depth--
		}
	}
}

// validationRules are gqlparser's rules, after a check of the document's
// shape and with OverlappingFieldsCanBeMerged run only when the shape is
// within the limits. A document beyond them gets that one error; any
// other reports at most maxValidationErrors. gqlgen calls it once per
// document it validates.
func validationRules() *rules.Rules {
	v := &validation{}
	out := rules.NewRules()
	// Observers run in the order of their rules' names: DocumentShape
	// sorts before every rule of gqlparser, so its check comes first.
	out.AddRule("DocumentShape", v.shapeRule)
	for name, fn := range rules.NewDefaultRules().GetInner() {
		if name == rules.OverlappingFieldsCanBeMergedRule.Name {
			fn = v.overlaps
		}
		if quiet, ok := withoutSuggestions[name]; ok {
			// gqlgen keeps these when SetDisableSuggestion is on.
			name, fn = quiet.Name, quiet.RuleFunc
		}
		out.AddRule(name, v.capped(fn))
	}
	return out
}

// nestsDeeper reports whether a decoded JSON value nests lists and
// objects more than limit levels deep.
func nestsDeeper(v any, limit int) bool {
	switch v := v.(type) {
	case map[string]any:
		if limit == 0 {
			return true
		}
		for _, e := range v {
			if nestsDeeper(e, limit-1) {
				return true
			}
		}
	case []any:
		if limit == 0 {
			return true
		}
		for _, e := range v {
			if nestsDeeper(e, limit-1) {
				return true
			}
		}
	}
	return false
}

// withoutSuggestions are the rules that would suggest names, by the
// variants that do not.
var withoutSuggestions = map[string]core.Rule{
	rules.FieldsOnCorrectTypeRule.Name: rules.FieldsOnCorrectTypeRuleWithoutSuggestions,
	rules.KnownArgumentNamesRule.Name:  rules.KnownArgumentNamesRuleWithoutSuggestions,
	rules.KnownTypeNamesRule.Name:      rules.KnownTypeNamesRuleWithoutSuggestions,
	rules.ScalarLeafsRule.Name:         rules.ScalarLeafsRuleWithoutSuggestions,
	rules.ValuesOfCorrectTypeRule.Name: rules.ValuesOfCorrectTypeRuleWithoutSuggestions,
}

// validation is the state of one document's validation.
type validation struct {
	checked bool
	shape   string // the limit the document exceeds, or ""
	errors  int
}

// shapeRule checks the document's shape at the first event of the walk.
func (v *validation) shapeRule(obs *core.Events, addError core.AddErrFunc) {
	check := func(w *core.Walker) {
		if v.checked {
			return
		}
		v.checked = true
		if v.shape = checkShape(w.Document); v.shape != "" {
			addError(core.Message("%s", v.shape))
		}
	}
	obs.OnOperation(func(w *core.Walker, _ *ast.OperationDefinition) { check(w) })
	obs.OnField(func(w *core.Walker, _ *ast.Field) { check(w) })
	obs.OnFragment(func(w *core.Walker, _ *ast.FragmentDefinition) { check(w) })
	obs.OnInlineFragment(func(w *core.Walker, _ *ast.InlineFragment) { check(w) })
	obs.OnFragmentSpread(func(w *core.Walker, _ *ast.FragmentSpread) { check(w) })
	obs.OnDirective(func(w *core.Walker, _ *ast.Directive) { check(w) })
	obs.OnDirectiveList(func(w *core.Walker, _ []*ast.Directive) { check(w) })
	obs.OnValue(func(w *core.Walker, _ *ast.Value) { check(w) })
	obs.OnVariable(func(w *core.Walker, _ *ast.VariableDefinition) { check(w) })
}

// capped lets a rule report while the document's shape is within the
// limits and it has fewer than maxValidationErrors errors, then says once
// that there are more.
func (v *validation) capped(fn core.RuleFunc) core.RuleFunc {
	return func(obs *core.Events, addError core.AddErrFunc) {
		fn(obs, func(opts ...core.ErrorOption) {
			if v.shape != "" {
				return
			}
			v.errors++
			switch {
			case v.errors <= maxValidationErrors:
				addError(opts...)
			case v.errors == maxValidationErrors+1:
				addError(core.Message("The document has more errors; only the first %d are shown.", maxValidationErrors))
			}
		})
	}
}

// overlaps runs OverlappingFieldsCanBeMerged over a document whose shape
// is within the limits.
func (v *validation) overlaps(obs *core.Events, addError core.AddErrFunc) {
	done := false
	obs.OnOperation(func(w *core.Walker, _ *ast.OperationDefinition) {
		if done || v.shape != "" {
			return
		}
		done = true
		overlaps := &core.Events{}
		rules.OverlappingFieldsCanBeMergedRule.RuleFunc(overlaps, addError)
		core.Walk(w.Schema, w.Document, overlaps)
	})
}

// checkShape says what limit a document exceeds, or "" when none.
func checkShape(doc *ast.QueryDocument) string {
	if n := len(doc.Fragments); n > maxFragments {
		return fmt.Sprintf("The document defines %d fragments; at most %d are allowed.", n, maxFragments)
	}
	s := shapeWalk{fragments: make(map[string]*ast.FragmentDefinition, len(doc.Fragments)), active: map[string]bool{}, spread: map[string]bool{}}
	for _, f := range doc.Fragments {
		if len(f.Directives) > maxDirectives {
			return s.tooManyDirectives()
		}
		if _, ok := s.fragments[f.Name]; !ok {
			s.fragments[f.Name] = f
		}
	}
	for _, op := range doc.Operations {
		if len(op.Directives) > maxDirectives {
			return s.tooManyDirectives()
		}
		for _, v := range op.VariableDefinitions {
			if len(v.Directives) > maxDirectives {
				return s.tooManyDirectives()
			}
		}
		if !s.set(op.SelectionSet, &mergedField{}) {
			return s.failure
		}
	}
	// Fragments no operation spreads are refused by NoUnusedFragments, and
	// still compared by OverlappingFieldsCanBeMerged.
	for _, f := range doc.Fragments {
		if !s.spread[f.Name] && !s.spreadFragment(f.Name, &mergedField{}) {
			return s.failure
		}
	}
	return ""
}

// shapeWalk expands a document's operations with their fragments spread,
// merging the fields that answer under the same name as the executor
// will, and stops at the first limit exceeded.
type shapeWalk struct {
	fragments  map[string]*ast.FragmentDefinition
	active     map[string]bool // fragments being expanded
	spread     map[string]bool // fragments expanded at least once
	selections int
	pairs      int // pairs of fields merged into one, and of fragments spread in one selection set
	failure    string
}

// mergedField is one name of the answer and the fields merged into it.
type mergedField struct {
	fields   int
	children map[string]*mergedField
}

func (s *shapeWalk) set(set ast.SelectionSet, into *mergedField) bool {
	spreads := 0
	for _, sel := range set {
		s.selections++
		if s.selections > maxSelections {
			s.failure = fmt.Sprintf("The document expands to more than %d selections with its fragments spread; at most %d are allowed.", maxSelections, maxSelections)
			return false
		}
		var dirs ast.DirectiveList
		ok := true
		switch sel := sel.(type) {
		case *ast.Field:
			dirs = sel.Directives
			name := sel.Alias
			if name == "" {
				name = sel.Name
			}
			if into.children == nil {
				into.children = map[string]*mergedField{}
			}
			f := into.children[name]
			if f == nil {
				if len(into.children) == maxWidth {
					s.failure = fmt.Sprintf("A selection set of the document answers under more than %d names; at most %d are allowed.", maxWidth, maxWidth)
					return false
				}
				f = &mergedField{}
				into.children[name] = f
			}
			s.pairs += f.fields
			f.fields++
			ok = s.checkPairs() && s.set(sel.SelectionSet, f)
		case *ast.InlineFragment:
			dirs = sel.Directives
			ok = s.set(sel.SelectionSet, into)
		case *ast.FragmentSpread:
			dirs = sel.Directives
			s.pairs += spreads
			spreads++
			ok = s.checkPairs() && s.spreadFragment(sel.Name, into)
		}
		if len(dirs) > maxDirectives {
			s.failure = s.tooManyDirectives()
			return false
		}
		if !ok {
			return false
		}
	}
	return true
}

func (s *shapeWalk) spreadFragment(name string, into *mergedField) bool {
	f := s.fragments[name]
	if f == nil || s.active[name] {
		return true // unknown fragments and cycles are validation errors of their own
	}
	s.active[name], s.spread[name] = true, true
	defer delete(s.active, name)
	return s.set(f.SelectionSet, into)
}

func (s *shapeWalk) checkPairs() bool {
	if s.pairs > maxMergePairs {
		s.failure = fmt.Sprintf("The document has more than %d pairs of fields answering under one name, or of fragments spread together; at most %d are allowed.", maxMergePairs, maxMergePairs)
		return false
	}
	return true
}

func (s *shapeWalk) tooManyDirectives() string {
	return fmt.Sprintf("A field, fragment or operation of the document has more than %d directives; at most %d are allowed.", maxDirectives, maxDirectives)
}
