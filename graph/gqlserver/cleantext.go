package gqlserver

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"barberd/graph/domain"
	"barberd/graph/text"
)

// Text that reaches a resolver is valid UTF-8 without NUL characters, on
// both databases alike: PostgreSQL refuses NUL in text, SQLite would store
// it. Invalid UTF-8 is refused where it arrives, in the HTTP request,
// before JSON decoding would quietly turn it into U+FFFD; a NUL, which
// JSON ("\u0000") and GraphQL strings can both spell, is refused in the
// operation's arguments once its variables are known. A lone surrogate
// escape ("\ud800"), valid JSON that decodes to U+FFFD, is refused with
// invalid UTF-8 (text.JSONProblems).

// maxTextProblems bounds how many bad inputs one answer lists.
const maxTextProblems = 20

// cleanText is the gqlgen handler extension that refuses, before any
// resolver runs, an operation with a string input (an argument, an input
// object field, a list element, an id, a filter; literal or variable)
// holding a NUL character or invalid UTF-8. Errors: validation_failed,
// with extensions.fields naming each input by its path from the argument
// ("input.client.name", "where.nameContains", "ids[2]").
type cleanText struct{}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
} = cleanText{}

func (cleanText) ExtensionName() string { return "CleanText" }

func (cleanText) Validate(graphql.ExecutableSchema) error { return nil }

func (cleanText) MutateOperationContext(_ context.Context, oc *graphql.OperationContext) *gqlerror.Error {
	if oc.Operation == nil {
		return nil
	}
	// A lone surrogate escape in the document's strings decodes to U+FFFD
	// before the arguments are known. (A block string holds no escapes;
	// one spelling a surrogate there is refused too.)
	if text.JSONStringProblem([]byte(oc.RawQuery)) == text.InvalidUTF8 {
		return refuse((&domain.Problems{{Field: "query", Message: text.InvalidUTF8}}).Err())
	}
	c := textCheck{vars: oc.Variables, seen: map[string]bool{}}
	c.directives(oc.Operation.Directives)
	c.set(oc.Operation.SelectionSet)
	if err := c.problems.Err(); err != nil {
		return refuse(err)
	}
	return nil
}

// textCheck visits every argument of an operation once: a fragment is
// checked once however often it is spread.
type textCheck struct {
	vars     map[string]any
	seen     map[string]bool
	problems domain.Problems
}

func (c *textCheck) set(set ast.SelectionSet) {
	for _, sel := range set {
		switch sel := sel.(type) {
		case *ast.Field:
			c.directives(sel.Directives)
			c.arguments(sel.Arguments)
			c.set(sel.SelectionSet)
		case *ast.InlineFragment:
			c.directives(sel.Directives)
			c.set(sel.SelectionSet)
		case *ast.FragmentSpread:
			c.directives(sel.Directives)
			if !c.seen[sel.Name] && sel.Definition != nil {
				c.seen[sel.Name] = true
				c.set(sel.Definition.SelectionSet)
			}
		}
	}
}

func (c *textCheck) directives(dirs ast.DirectiveList) {
	for _, d := range dirs {
		c.arguments(d.Arguments)
	}
}

func (c *textCheck) arguments(args ast.ArgumentList) {
	for _, a := range args {
		if v, err := a.Value.Value(c.vars); err == nil {
			c.value(&inputPath{key: a.Name}, v)
		}
	}
}

// value checks every string in an argument's value.
func (c *textCheck) value(at *inputPath, v any) {
	if len(c.problems) >= maxTextProblems {
		return
	}
	switch v := v.(type) {
	case nil:
	case string:
		if msg := text.Problem(v); msg != "" {
			c.problems.Add(at.String(), "%s", msg)
		}
	case []any:
		for i, e := range v {
			c.value(&inputPath{parent: at, index: i}, e)
		}
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			c.value(&inputPath{parent: at, key: k}, v[k])
		}
	default:
		// Values built by Go code rather than decoded from JSON.
		rv := reflect.ValueOf(v)
		switch rv.Kind() {
		case reflect.String:
			c.value(at, rv.String())
		case reflect.Slice, reflect.Array:
			for i := range rv.Len() {
				c.value(&inputPath{parent: at, index: i}, rv.Index(i).Interface())
			}
		case reflect.Pointer:
			if !rv.IsNil() {
				c.value(at, rv.Elem().Interface())
			}
		}
	}
}

// inputPath is where a value sits in an argument: a.b[2].c. It is spelled
// out only for a bad value.
type inputPath struct {
	parent *inputPath
	key    string // "" for a list element
	index  int
}

func (p *inputPath) String() string {
	if p.parent == nil {
		return p.key
	}
	if p.key == "" {
		return p.parent.String() + "[" + strconv.Itoa(p.index) + "]"
	}
	return p.parent.String() + "." + p.key
}

// cleanPOST is gqlgen's POST transport, refusing a body whose text is not
// UTF-8 before JSON decoding would replace it with U+FFFD.
type cleanPOST struct{ transport.POST }

func (t cleanPOST) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	body, err := io.ReadAll(r.Body)
	if err == nil {
		if field, found := invalidUTF8In(body, ""); found {
			refuseRequest(w, r, exec, field)
			return
		}
	}
	// gqlgen reads the same bytes, and the same read error after them.
	var rd io.Reader = bytes.NewReader(body)
	if err != nil {
		rd = io.MultiReader(rd, errReader{err})
	}
	r.Body = io.NopCloser(rd)
	t.POST.Do(w, r, exec)
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// cleanGET is gqlgen's GET transport, refusing parameters that are not
// valid UTF-8 (percent-encoding can carry any bytes).
type cleanGET struct{ transport.GET }

func (t cleanGET) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	if q, err := url.ParseQuery(r.URL.RawQuery); err == nil {
		for _, name := range []string{"query", "operationName", "variables", "extensions"} {
			v := q.Get(name)
			field, bad := name, !utf8.ValidString(v)
			if name == "variables" || name == "extensions" {
				if f, found := invalidUTF8In([]byte(v), name); found {
					field, bad = f, true
				}
			}
			if bad {
				refuseRequest(w, r, exec, field)
				return
			}
		}
	}
	t.GET.Do(w, r, exec)
}

// refuseRequest answers 400 validation_failed naming the field whose text
// is not valid UTF-8.
func refuseRequest(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor, field string) {
	err := refuse((&domain.Problems{{Field: field, Message: text.InvalidUTF8}}).Err())
	resp := exec.DispatchError(r.Context(), gqlerror.List{err})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	_ = json.NewEncoder(w).Encode(resp)
}

// invalidUTF8In finds the first string of a JSON text that is not
// UTF-8 text (bytes that are not UTF-8, a lone surrogate escape), and
// names it by its path under prefix ("variables.input.client.name"). A
// NUL is left to the arguments check, which names the argument.
func invalidUTF8In(doc []byte, prefix string) (string, bool) {
	for _, p := range text.JSONProblems(doc, prefix, maxTextProblems) {
		if p.Message == text.InvalidUTF8 {
			return p.Field, true
		}
	}
	return "", false
}
