package rest

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"slices"
	"strconv"

	"github.com/go-chi/chi/v5"

	"barberd/graph/domain"
	"barberd/graph/text"
)

// fields reads a JSON object (a body, or a nested object of one) field by
// field, recording every wrongly typed field, so a client hears of all its
// mistakes at once. Absent fields and nulls read as nil. A string that is
// not storable text (a NUL, invalid UTF-8) is a wrongly typed field too:
// no handler ever sees one.
type fields struct {
	prefix   string
	raw      map[string]json.RawMessage
	problems *domain.Problems
	query    bool // query parameters carry every value as a string
	// unfit says, by parameter, why a query value is not text: the value
	// in raw no longer shows it (JSON encoding replaces invalid UTF-8).
	unfit map[string]string
}

// decodeBody reads a POST body that must be a JSON object. A body may be
// left out only when optional is true.
// Errors: unsupported_media_type, payload_too_large, invalid_json.
func decodeBody(w http.ResponseWriter, r *http.Request, optional bool) (*fields, error) {
	body, err := io.ReadAll(r.Body) // bounded by LimitBody
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return nil, domain.Errorf(codePayloadTooLarge, "The request is larger than %s.", sizeText(tooLarge.Limit))
	}
	if err != nil {
		return nil, domain.Errorf(domain.CodeInvalidJSON, "The request body could not be read.")
	}
	f := &fields{raw: map[string]json.RawMessage{}, problems: new(domain.Problems)}
	if optional && len(bytes.TrimSpace(body)) == 0 {
		return f, nil
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		return nil, domain.Errorf(codeUnsupportedMediaType, "Send the request body as JSON, with Content-Type: application/json.")
	}
	if err := json.Unmarshal(body, &f.raw); err != nil || f.raw == nil {
		return nil, domain.Errorf(domain.CodeInvalidJSON, "The request body must be a JSON object.")
	}
	return f, nil
}

// queryFields reads query parameters as fields.
func queryFields(r *http.Request) *fields {
	f := &fields{raw: map[string]json.RawMessage{}, problems: new(domain.Problems), query: true}
	for k, vs := range r.URL.Query() {
		if len(vs) > 0 {
			b, _ := json.Marshal(vs[0])
			f.raw[k] = b
			if msg := text.Problem(vs[0]); msg != "" {
				if f.unfit == nil {
					f.unfit = map[string]string{}
				}
				f.unfit[k] = msg
			}
		}
	}
	return f
}

// pathID answers 404 with code notFound when the path's {id} cannot name
// a stored entity (graph.PlausibleID: a NUL, invalid UTF-8, anything that
// is not an id), so that no such id reaches a handler or the database.
func pathID(notFound, noun string) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if id := chi.URLParam(r, "id"); !domain.PlausibleID(id) {
				WriteError(w, r, domain.Errorf(notFound, "No %s %q.", noun, id))
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

func (f *fields) name(n string) string { return f.prefix + n }

// get returns the raw value of field n, when it is there and is not null.
// A string that is not storable text is recorded as a problem and reads as
// absent.
func (f *fields) get(n string) (json.RawMessage, bool) {
	v, ok := f.raw[n]
	if !ok || string(v) == "null" {
		return nil, false
	}
	msg := f.unfit[n]
	if !f.query && len(v) > 0 && v[0] == '"' {
		msg = text.JSONStringProblem(v)
	}
	if msg != "" {
		f.problems.Add(f.name(n), "%s", msg)
		return nil, false
	}
	return v, true
}

// str returns the string field n, or nil.
func (f *fields) str(n string) *string {
	v, ok := f.get(n)
	if !ok {
		return nil
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		f.problems.Add(f.name(n), "must be a string")
		return nil
	}
	return &s
}

// text returns the string field n, or "" (which the domain reports as
// missing when the field is required).
func (f *fields) text(n string) string {
	if s := f.str(n); s != nil {
		return *s
	}
	return ""
}

// integer returns the integer field n, or nil. In query parameters the
// integer is written as a decimal string.
func (f *fields) integer(n string) *int {
	v, ok := f.get(n)
	if !ok {
		return nil
	}
	var i int
	if err := json.Unmarshal(v, &i); err == nil {
		return &i
	}
	var s string
	if err := json.Unmarshal(v, &s); err == nil && f.isQuery() {
		if i, err := strconv.Atoi(s); err == nil {
			return &i
		}
	}
	f.problems.Add(f.name(n), "must be an integer")
	return nil
}

// integers returns the field n, a list of integers, or nil.
func (f *fields) integers(n string) []int {
	v, ok := f.get(n)
	if !ok {
		return nil
	}
	var is []int
	if err := json.Unmarshal(v, &is); err != nil {
		f.problems.Add(f.name(n), "must be a list of integers")
		return nil
	}
	return is
}

// boolean returns the boolean field n ("true"/"false" in a query), or nil.
func (f *fields) boolean(n string) *bool {
	v, ok := f.get(n)
	if !ok {
		return nil
	}
	var b bool
	if err := json.Unmarshal(v, &b); err == nil {
		return &b
	}
	var s string
	if err := json.Unmarshal(v, &s); err == nil && f.isQuery() {
		if b, err := strconv.ParseBool(s); err == nil {
			return &b
		}
	}
	f.problems.Add(f.name(n), "must be true or false")
	return nil
}

// object returns the nested object n; when it is absent or of another type
// the result reads as empty.
func (f *fields) object(n string) *fields {
	sub := &fields{prefix: f.name(n) + ".", raw: map[string]json.RawMessage{}, problems: f.problems, query: f.query}
	v, ok := f.get(n)
	if !ok {
		return sub
	}
	if err := json.Unmarshal(v, &sub.raw); err != nil {
		f.problems.Add(f.name(n), "must be an object")
	}
	return sub
}

func (f *fields) isQuery() bool { return f.query }

// check returns nil when every field had the right type, leaving the rules
// to the resolver. Otherwise it returns a validation_failed error naming the
// wrongly typed fields and whatever the operation's check finds wrong with the
// others.
func (f *fields) check(found domain.Problems) error {
	if len(*f.problems) == 0 {
		return nil
	}
	all := slices.Clone(*f.problems)
	for _, p := range found {
		if !slices.ContainsFunc(all, func(q domain.FieldError) bool { return q.Field == p.Field }) {
			all = append(all, p)
		}
	}
	return all.Err()
}
