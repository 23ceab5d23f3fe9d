// Package openapitest checks HTTP exchanges of the REST v1 interface against
// its OpenAPI 3.1 document (rest/openapi.json), for use in tests.
//
// A Validator finds the operation of a request by method and path, checks
// that the response status is documented for it, and validates the response
// headers (X-Request-Id, Idempotent-Replayed, Retry-After, Content-Type) and
// body against the document's schemas. Schemas are validated as JSON Schema
// 2020-12 (the document is OpenAPI 3.1), so "type": ["string", "null"],
// const, if/then/else and additionalProperties: false all apply.
//
// Requests that match no documented route are accepted only as the
// document-level error responses: a path that is not in the document must get
// 404 with a problem whose code is not_found (components/responses/RouteNotFound),
// and a documented path with an undocumented method must get 405 with code
// method_not_allowed (components/responses/MethodNotAllowed). Both are counted
// in Seen under the pseudo operation ids NoRoute and NoMethod. A HEAD request
// on a path with a GET operation counts as that GET: its status must be
// documented, X-Request-Id must be present and the body empty.
package openapitest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Pseudo operation ids under which Seen counts exchanges that match no operation.
const (
	NoRoute  = "(no route)"           // path not in the document: 404 not_found
	NoMethod = "(method not allowed)" // documented path, other method: 405 method_not_allowed
)

// Names of the component responses used for requests that match no operation.
const (
	routeNotFoundResponse    = "RouteNotFound"
	methodNotAllowedResponse = "MethodNotAllowed"
)

// Validator validates responses against one OpenAPI document. It is safe for
// concurrent use.
type Validator struct {
	doc    *openapi3.T
	base   string // server base path without trailing slash, e.g. /api/integrations/v1
	routes []route

	noRoute  *openapi3.Operation
	noMethod *openapi3.Operation

	mu   sync.Mutex
	seen map[string]map[int]bool
}

type route struct {
	template string
	segments []string // "" for a path parameter
	literals int
	item     *openapi3.PathItem
}

// New parses and validates the document (pass the bytes of openapi.json).
func New(doc []byte) (*Validator, error) {
	loader := openapi3.NewLoader()
	loader.IsExternalRefsAllowed = false
	t, err := loader.LoadFromData(doc)
	if err != nil {
		return nil, fmt.Errorf("openapitest: parse document: %w", err)
	}
	if !t.IsOpenAPI31OrLater() {
		return nil, fmt.Errorf("openapitest: document is OpenAPI %q, want 3.1", t.OpenAPI)
	}
	if err := t.Validate(context.Background()); err != nil {
		return nil, fmt.Errorf("openapitest: invalid document: %w", err)
	}
	v := &Validator{doc: t, seen: map[string]map[int]bool{}}
	if len(t.Servers) > 0 && t.Servers[0] != nil {
		v.base = strings.TrimRight(t.Servers[0].URL, "/")
	}
	if t.Paths == nil || t.Paths.Len() == 0 {
		return nil, errors.New("openapitest: document has no paths")
	}
	for tmpl, item := range t.Paths.Map() {
		r := route{template: tmpl, item: item}
		for _, s := range strings.Split(strings.Trim(tmpl, "/"), "/") {
			if strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}") {
				r.segments = append(r.segments, "")
			} else {
				r.segments = append(r.segments, s)
				r.literals++
			}
		}
		v.routes = append(v.routes, r)
	}
	sort.Slice(v.routes, func(i, j int) bool { return v.routes[i].template < v.routes[j].template })

	if v.noRoute, err = pseudoOperation(t, routeNotFoundResponse, NoRoute, http.StatusNotFound); err != nil {
		return nil, err
	}
	if v.noMethod, err = pseudoOperation(t, methodNotAllowedResponse, NoMethod, http.StatusMethodNotAllowed); err != nil {
		return nil, err
	}
	return v, nil
}

// pseudoOperation wraps a component response in an operation of its own, so
// that requests matching no operation are validated like any other.
func pseudoOperation(t *openapi3.T, name, id string, status int) (*openapi3.Operation, error) {
	if t.Components == nil || t.Components.Responses[name] == nil {
		return nil, fmt.Errorf("openapitest: document lacks components/responses/%s", name)
	}
	op := openapi3.NewOperation()
	op.OperationID = id
	op.Responses = openapi3.NewResponses(openapi3.WithStatus(status, t.Components.Responses[name]))
	return op, nil
}

// Document returns the parsed document.
func (v *Validator) Document() *openapi3.T { return v.doc }

// Check validates one exchange: it finds the operation by method and path
// (relative to the server base /api/integrations/v1, or absolute: both are
// accepted), checks that the response status is documented for that
// operation, and validates the headers and body against the document.
// It returns a descriptive error, or nil.
func (v *Validator) Check(req *http.Request, status int, header http.Header, body []byte) error {
	if req == nil || req.URL == nil {
		return errors.New("openapitest: nil request")
	}
	if header == nil {
		header = http.Header{}
	}
	method := strings.ToUpper(req.Method)
	if method == "" {
		method = http.MethodGet
	}
	rel := v.relative(req.URL.Path)
	what := fmt.Sprintf("%s %s -> %d", method, req.URL.Path, status)

	r, ok := v.match(rel)
	opMethod := method
	if ok && method == http.MethodHead && r.item.Head == nil && r.item.Get != nil {
		opMethod = http.MethodGet // HEAD is answered like GET, without a body
	}
	var op *openapi3.Operation
	var tmpl string
	switch {
	case !ok:
		op, tmpl = v.noRoute, rel
	case r.item.GetOperation(opMethod) == nil:
		op, tmpl = v.noMethod, r.template
	default:
		op, tmpl = r.item.GetOperation(opMethod), r.template
	}
	v.record(op.OperationID, status)
	what += " (" + op.OperationID + ")"

	if op.Responses.Status(status) == nil {
		return fmt.Errorf("openapitest: %s: status %d is not documented; documented: %v", what, status, statuses(op))
	}

	if method == http.MethodHead {
		// The library does not validate HEAD responses; check what applies.
		if header.Get("X-Request-Id") == "" {
			return fmt.Errorf("openapitest: %s: response header \"X-Request-Id\" missing", what)
		}
		if len(body) != 0 {
			return fmt.Errorf("openapitest: %s: HEAD response has a body", what)
		}
		return nil
	}

	pathItem := &openapi3.PathItem{}
	if ok {
		pathItem = r.item
	}
	input := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{
			Request: req,
			Route: &routers.Route{
				Spec:      v.doc,
				Server:    firstServer(v.doc),
				Path:      tmpl,
				PathItem:  pathItem,
				Method:    method,
				Operation: op,
			},
		},
		Status:  status,
		Header:  header,
		Body:    io.NopCloser(bytes.NewReader(body)),
		Options: options(),
	}
	if err := openapi3filter.ValidateResponse(context.Background(), input); err != nil {
		return fmt.Errorf("openapitest: %s: %w", what, err)
	}
	if err := checkProblem(status, header, body); err != nil {
		return fmt.Errorf("openapitest: %s: %w", what, err)
	}
	return nil
}

// options makes the library report every violation, each as its JSON
// pointer and reason (without dumping the schema and the value).
func options() *openapi3filter.Options {
	o := &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true}
	o.WithCustomSchemaErrorFunc(describeSchemaError)
	return o
}

// describeSchemaError renders a schema violation in one line. Schemas that use
// JSON Schema 2020-12 keywords are checked by santhosh-tekuri/jsonschema,
// whose leaf errors name the failing value and keyword; the others by the
// library's own validator, whose reason is enough.
func describeSchemaError(err *openapi3.SchemaError) string {
	var verr *jsonschema.ValidationError
	if errors.As(err, &verr) {
		var leaves []string
		var walk func(e *jsonschema.ValidationError)
		walk = func(e *jsonschema.ValidationError) {
			if len(e.Causes) == 0 {
				leaves = append(leaves, e.Error())
			}
			for _, c := range e.Causes {
				walk(c)
			}
		}
		walk(verr)
		if len(leaves) > 0 {
			return strings.Join(leaves, "; ")
		}
	}
	return fmt.Sprintf("at '/%s': %s", strings.Join(err.JSONPointer(), "/"), err.Reason)
}

// checkProblem checks what the schema cannot: a problem's request_id equals
// the X-Request-Id header.
func checkProblem(status int, header http.Header, body []byte) error {
	mt, _, err := mime.ParseMediaType(header.Get("Content-Type"))
	if err != nil || mt != "application/problem+json" {
		if status >= 400 {
			return fmt.Errorf("error response has Content-Type %q, want application/problem+json", header.Get("Content-Type"))
		}
		return nil
	}
	var p struct {
		RequestID string `json:"request_id"`
	}
	if err := json.Unmarshal(body, &p); err != nil {
		return fmt.Errorf("problem body: %w", err)
	}
	if got := header.Get("X-Request-Id"); p.RequestID != got {
		return fmt.Errorf("problem request_id %q differs from X-Request-Id header %q", p.RequestID, got)
	}
	return nil
}

// relative strips the server base path when present.
func (v *Validator) relative(p string) string {
	if v.base != "" {
		if p == v.base {
			return "/"
		}
		if strings.HasPrefix(p, v.base+"/") {
			return p[len(v.base):]
		}
	}
	if p == "" {
		return "/"
	}
	return p
}

// match finds the route of a relative path. Literal segments win over path
// parameters (the most literal segments, then leftmost literal).
func (v *Validator) match(p string) (route, bool) {
	segs := strings.Split(strings.Trim(p, "/"), "/")
	if p != "/" && (strings.HasSuffix(p, "/") || strings.Contains(p, "//")) {
		return route{}, false // trailing or doubled slashes are not routes
	}
	var best route
	found := false
	for _, r := range v.routes {
		if len(r.segments) != len(segs) {
			continue
		}
		ok := true
		for i, s := range r.segments {
			if s == "" {
				if segs[i] == "" {
					ok = false
					break
				}
				continue
			}
			if s != segs[i] {
				ok = false
				break
			}
		}
		if !ok {
			continue
		}
		if !found || better(r, best) {
			best, found = r, true
		}
	}
	return best, found
}

func better(a, b route) bool {
	if a.literals != b.literals {
		return a.literals > b.literals
	}
	for i := range a.segments {
		if (a.segments[i] == "") != (b.segments[i] == "") {
			return a.segments[i] != ""
		}
	}
	return false
}

func firstServer(t *openapi3.T) *openapi3.Server {
	if len(t.Servers) > 0 {
		return t.Servers[0]
	}
	return nil
}

func statuses(op *openapi3.Operation) []int {
	var out []int
	for k := range op.Responses.Map() {
		if n, err := strconv.Atoi(k); err == nil {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

func (v *Validator) record(opID string, status int) {
	v.mu.Lock()
	defer v.mu.Unlock()
	m := v.seen[opID]
	if m == nil {
		m = map[int]bool{}
		v.seen[opID] = m
	}
	m[status] = true
}

// Seen reports which (operationId, status) pairs Check was called with,
// documented or not, statuses sorted. Exchanges that matched no operation are
// under NoRoute and NoMethod.
func (v *Validator) Seen() map[string][]int {
	v.mu.Lock()
	defer v.mu.Unlock()
	out := make(map[string][]int, len(v.seen))
	for id, m := range v.seen {
		for st := range m {
			out[id] = append(out[id], st)
		}
		slices.Sort(out[id])
	}
	return out
}

// Documented reports every (operationId, status) pair of the document,
// statuses sorted, including NoRoute (404) and NoMethod (405).
func (v *Validator) Documented() map[string][]int {
	out := map[string][]int{}
	for _, r := range v.routes {
		for _, op := range r.item.Operations() {
			out[op.OperationID] = statuses(op)
		}
	}
	out[NoRoute] = statuses(v.noRoute)
	out[NoMethod] = statuses(v.noMethod)
	return out
}

// Unexercised reports the documented (operationId, status) pairs that Check
// has not seen yet.
func (v *Validator) Unexercised() map[string][]int {
	seen := v.Seen()
	out := map[string][]int{}
	for id, sts := range v.Documented() {
		for _, st := range sts {
			if !slices.Contains(seen[id], st) {
				out[id] = append(out[id], st)
			}
		}
	}
	return out
}

// Undocumented reports the (operationId, status) pairs seen by Check that the
// document does not list.
func (v *Validator) Undocumented() map[string][]int {
	doc := v.Documented()
	out := map[string][]int{}
	for id, sts := range v.Seen() {
		for _, st := range sts {
			if !slices.Contains(doc[id], st) {
				out[id] = append(out[id], st)
			}
		}
	}
	return out
}
