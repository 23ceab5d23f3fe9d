package mcpserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"

	"barberd/graph/domain"
	"barberd/graph/text"
)

// decodeArguments reads a tool's arguments into v. A wrongly typed or
// unknown argument is a validation_failed error naming it, as REST names a
// wrongly typed field; what the arguments say is left to the resolver's
// checks (graph.Check*), so both adapters refuse the same input alike.
// Text that cannot be stored (a NUL, invalid UTF-8, a lone surrogate) is
// validation_failed naming it, before any tool runs.
func decodeArguments(raw json.RawMessage, v any) error {
	if len(bytes.TrimSpace(raw)) == 0 || string(raw) == "null" {
		raw = json.RawMessage("{}")
	}
	// Decoding would read invalid UTF-8 and lone surrogates as U+FFFD.
	if found := text.JSONProblems(raw, "", maxTextProblems); len(found) > 0 {
		var p domain.Problems
		for _, f := range found {
			p.Add(f.Field, "%s", f.Message)
		}
		return p.Err()
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.DisallowUnknownFields()
	err := d.Decode(v)
	if err == nil {
		return nil
	}
	var p domain.Problems
	var typeErr *json.UnmarshalTypeError
	switch {
	case errors.As(err, &typeErr) && typeErr.Field != "":
		p.Add(typeErr.Field, "must be %s", kindOf(typeErr.Type))
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		// encoding/json has no error type for it; the message is stable.
		p.Add(strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`), "is not an argument of this tool")
	default:
		return domain.Errorf(domain.CodeInvalidJSON, "The arguments must be a JSON object.")
	}
	return p.Err()
}

// maxTextProblems bounds how many bad strings one refusal lists.
const maxTextProblems = 20

// kindOf names a JSON type for people.
func kindOf(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Int, reflect.Int64:
		return "an integer"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice:
		return "a list of " + strings.TrimPrefix(strings.TrimPrefix(kindOf(t.Elem()), "a "), "an ") + "s"
	}
	return "an object"
}
