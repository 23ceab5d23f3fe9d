package rest

// An internal test: decodeBody, queryFields and fields are unexported.

import (
	"bytes"
	"encoding/json"
	"mime"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"barberd/graph/domain"
)

// fzTopFields are the top-level names the handlers read, and fzClientFields
// those of the nested client object of a new appointment.
var (
	fzTopFields = []string{
		"unit_id", "service_id", "barber_id", "hold_id", "starts_at", "external_reference",
		"client", "ttl_seconds", "limit", "peek", "reason", "through", "date",
	}
	fzClientFields = []string{"name", "phone", "email"}
)

// fzAccessors are the ways a handler reads a field.
var fzAccessors = []string{"str", "integer", "boolean", "object"}

// fzRead reads field n of f with accessor kind and reports whether it came
// back with a value (for object: whether the field is an object).
func fzRead(t *testing.T, f *fields, kind, n string) (any, bool) {
	t.Helper()
	switch kind {
	case "str":
		s := f.str(n)
		return s, s != nil
	case "integer":
		i := f.integer(n)
		return i, i != nil
	case "boolean":
		b := f.boolean(n)
		return b, b != nil
	case "object":
		sub := f.object(n)
		if sub.prefix != f.prefix+n+"." || sub.problems != f.problems || sub.query != f.query {
			t.Fatalf("object(%q) of %q: prefix %q, shared problems %v, query %v", n, f.prefix, sub.prefix, sub.problems == f.problems, sub.query)
		}
		return sub, len(sub.raw) > 0
	}
	t.Fatalf("unknown accessor %q", kind)
	return nil, false
}

// fzExpect derives, independently of decode.go, what accessor kind makes of
// the raw JSON value v of a field (present says whether the field is there
// at all; unfit whether it is a string that is not storable text): whether
// it is a bad field, and the value a good one reads as.
func fzExpect(kind string, v json.RawMessage, present, query, unfit bool) (bad bool, want any) {
	v = bytes.TrimSpace(v)
	if !present || string(v) == "null" {
		return false, nil
	}
	if unfit {
		return true, nil
	}
	var s string
	isString := v[0] == '"' && json.Unmarshal(v, &s) == nil
	switch kind {
	case "str":
		if isString {
			return false, s
		}
		return true, nil
	case "integer":
		lit := string(v)
		if query && isString {
			lit = s // strconv.Atoi's syntax: an optional sign, then digits
		} else if strings.ContainsAny(lit, `".eE`) {
			return true, nil
		}
		i, err := strconv.ParseInt(lit, 10, strconv.IntSize)
		if err != nil {
			return true, nil
		}
		return false, int(i)
	case "boolean":
		switch {
		case string(v) == "true" || string(v) == "false":
			return false, string(v) == "true"
		case query && isString:
			if b, err := strconv.ParseBool(s); err == nil {
				return false, b
			}
		}
		return true, nil
	case "object":
		return v[0] != '{', nil
	}
	panic("unknown accessor " + kind)
}

// fzCheckField reads field n of g with accessor kind, checks the value
// against fzExpect, and returns the full name of the field when it is bad.
// params are the query parameters as sent (nil for a body).
func fzCheckField(t *testing.T, g *fields, kind, n string, params url.Values) (sub *fields, bad string) {
	t.Helper()
	raw, present := g.raw[n]
	unfit := fzUnfitJSON(raw)
	if g.query {
		unfit = fzUnfitText(params.Get(n))
	}
	isBad, want := fzExpect(kind, raw, present, g.query, unfit)
	if isBad {
		bad = g.prefix + n
	}
	got, ok := fzRead(t, g, kind, n)
	switch got := got.(type) {
	case *fields:
		if ok && (isBad || bytes.TrimSpace(raw)[0] != '{') {
			t.Fatalf("object(%q) = %s from %s", g.prefix+n, fzDump(got.raw), raw)
		}
		return got, bad
	}
	if ok == (want == nil) {
		t.Fatalf("%s(%q) from %s: got a value %v, want one %v", kind, g.prefix+n, raw, ok, want != nil)
	}
	if !ok {
		return nil, bad
	}
	switch got := got.(type) {
	case *string:
		if w := want.(string); *got != w {
			t.Fatalf("str(%q) from %s = %q, want %q", g.prefix+n, raw, *got, w)
		}
	case *int:
		if *got != want.(int) {
			t.Fatalf("integer(%q) from %s = %d, want %d", g.prefix+n, raw, *got, want)
		}
	case *bool:
		if *got != want.(bool) {
			t.Fatalf("boolean(%q) from %s = %v, want %v", g.prefix+n, raw, *got, want)
		}
	}
	return nil, bad
}

// fzCheckAccessors reads every known field of f with every accessor, each
// accessor on a fresh copy of f, as a handler would: top-level fields first,
// then the fields of nested objects. It checks each value, and that exactly
// the bad fields, each once and by full name, are reported as problems.
func fzCheckAccessors(t *testing.T, f *fields, params url.Values, names []string, nested map[string][]string) {
	t.Helper()
	for _, kind := range fzAccessors {
		g := &fields{prefix: f.prefix, raw: f.raw, problems: new(domain.Problems), query: f.query, unfit: f.unfit}
		var wantBad []string
		note := func(bad string) {
			if bad != "" {
				wantBad = append(wantBad, bad)
			}
		}
		subs := map[string]*fields{}
		for _, n := range names {
			sub, bad := fzCheckField(t, g, kind, n, params)
			note(bad)
			subs[n] = sub
		}
		for _, n := range names {
			if nested[n] == nil {
				continue
			}
			sub := subs[n]
			if kind != "object" {
				var bad string
				sub, bad = fzCheckField(t, g, "object", n, params)
				note(bad)
			}
			for _, m := range nested[n] {
				_, bad := fzCheckField(t, sub, kind, m, params)
				note(bad)
			}
		}
		var gotBad []string
		for _, p := range *g.problems {
			gotBad = append(gotBad, p.Field)
			if p.Message == "" {
				t.Fatalf("%s: problem %q without a message", kind, p.Field)
			}
		}
		if !slices.Equal(gotBad, wantBad) {
			t.Fatalf("%s: problems %q, want %q (fields %s)", kind, gotBad, wantBad, fzDump(f.raw))
		}
		err := g.check(nil)
		if (err == nil) != (len(wantBad) == 0) {
			t.Fatalf("%s: check() = %v with problems %q", kind, err, wantBad)
		}
		if err != nil {
			e, ok := domain.AsError(err)
			if !ok || e.Code != domain.CodeValidationFailed || len(e.Fields) != len(wantBad) {
				t.Fatalf("%s: check() = %#v, want validation_failed naming %q", kind, err, wantBad)
			}
		}
	}
}

func fzDump(raw map[string]json.RawMessage) string {
	b, _ := json.Marshal(raw)
	return string(b)
}

// fzIsJSONObject reports whether body is one JSON value, an object.
func fzIsJSONObject(body []byte) bool {
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	return json.Valid(body) && len(trimmed) > 0 && trimmed[0] == '{'
}

func FuzzDecodeBody(f *testing.F) {
	const jsonType = "application/json"
	for _, seed := range []struct {
		body, contentType string
		optional          bool
	}{
		{`{"unit_id":"u1","service_id":"s1","barber_id":"b1","starts_at":"2027-03-28T01:30:00","client":{"name":"Zé","phone":"+351912345678","email":"ze@example.com"},"external_reference":"r-1"}`, jsonType, false},
		{`{"unit_id":"u1","service_id":"s1","starts_at":"2026-06-15T09:00:00","ttl_seconds":300}`, "application/json; charset=utf-8", false},
		{`{"starts_at":"2026-10-25T01:30:00+01:00","barber_id":null,"hold_id":null}`, jsonType, false},
		{`{"ttl_seconds":1e3,"limit":1.0,"peek":"true"}`, jsonType, false},
		{`{"ttl_seconds":99999999999999999999999,"limit":-0,"peek":1}`, jsonType, false},
		{`{"ttl_seconds":"300","limit":-9223372036854775808}`, jsonType, false},
		{`{"client":"Zé","unit_id":1,"service_id":true,"starts_at":["2026-06-15T09:00:00"]}`, jsonType, false},
		{`{"client":{"name":1,"phone":false,"email":{"x":1},"client":{"name":"nested"}}}`, jsonType, false},
		{`{"client":[],"external_reference":{}}`, jsonType, false},
		{`{"client":null,"unit_id":"\u0000\ud800","\u0075nit_id":"dup"}`, jsonType, false},
		{`{"unit_id":"\ud83d\ude00","service_id":"\udc00\ud800","barber_id":"\\u0000","hold_id":"\ud800\\udc00","client":{"name":"a\u0000"}}`, jsonType, false},
		{`{"unit_id":"a","unit_id":2}`, jsonType, false},
		{"{\"unit_id\":\"\xff\xfe\",\"\xff\":1}", jsonType, false},
		{`{"reason":"` + strings.Repeat("ü", 600) + `"}`, jsonType, false},
		{`{}`, jsonType, false},
		{` {} `, jsonType, true},
		{`{} {}`, jsonType, false},
		{`{"a":1}x`, jsonType, false},
		{"\ufeff{}", jsonType, false},
		{`null`, jsonType, false},
		{`[]`, jsonType, false},
		{`"text"`, jsonType, false},
		{`12`, jsonType, false},
		{`{"a":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}`, jsonType, false},
		{``, jsonType, false},
		{``, "", true},
		{" \n\t", "text/plain", true},
		{"\u00a0", "text/plain", true},
		{`{}`, "", false},
		{`{}`, "text/plain", false},
		{`{}`, "APPLICATION/JSON", false},
		{`{}`, "application/json;", false},
		{`{}`, "application/json; charset=\"", false},
		{`{}`, "application/problem+json", false},
		{`{}`, "application/json, text/plain", false},
	} {
		f.Add([]byte(seed.body), seed.contentType, seed.optional, uint16(0))
	}
	// Bodies at the size limit and just over it, padded with leading
	// whitespace: pad keeps the fuzzer's inputs small (large ones make
	// minimising slow) while the body still reaches the limit.
	f.Add([]byte(`{}`), jsonType, false, uint16(DefaultMaxBody-2))
	f.Add([]byte(`{} `), jsonType, false, uint16(DefaultMaxBody-2))
	f.Add([]byte(`{"unit_id":"u1"}`), jsonType, true, uint16(DefaultMaxBody-16))
	f.Add([]byte(`  `), jsonType, true, uint16(DefaultMaxBody-1))
	allowed := []string{domain.CodeInvalidJSON, codeUnsupportedMediaType, codePayloadTooLarge}
	f.Fuzz(func(t *testing.T, data []byte, contentType string, optional bool, pad uint16) {
		body := append(bytes.Repeat([]byte(" "), int(pad)), data...)
		r := httptest.NewRequest(http.MethodPost, "/v1/appointments", bytes.NewReader(body))
		r.Header.Set("Content-Type", contentType)
		w := httptest.NewRecorder()
		r.Body = http.MaxBytesReader(w, r.Body, DefaultMaxBody) // as LimitBody does
		got, err := decodeBody(w, r, optional)

		blank := optional && len(bytes.TrimSpace(body)) == 0
		mt, _, mimeErr := mime.ParseMediaType(contentType)
		var want string
		switch {
		case len(body) > DefaultMaxBody:
			want = codePayloadTooLarge
		case blank:
		case mimeErr != nil || mt != "application/json":
			want = codeUnsupportedMediaType
		case !fzIsJSONObject(body):
			want = domain.CodeInvalidJSON
		}
		if err != nil {
			e, ok := domain.AsError(err)
			if !ok || !slices.Contains(allowed, e.Code) || e.Message == "" {
				t.Fatalf("decodeBody: %#v is not a domain error with one of the codes %q", err, allowed)
			}
			if _, known := statusOf[e.Code]; !known {
				t.Fatalf("decodeBody: code %q has no HTTP status", e.Code)
			}
			if e.Code != want {
				t.Fatalf("decodeBody(%q, %q, optional %v) = %s, want %q", fzShort(body), contentType, optional, e.Code, want)
			}
			if got != nil {
				t.Fatalf("decodeBody returned fields with error %v", err)
			}
			return
		}
		if want != "" {
			t.Fatalf("decodeBody(%q, %q, optional %v) succeeded, want %s", fzShort(body), contentType, optional, want)
		}
		if got == nil || got.raw == nil || got.problems == nil || len(*got.problems) != 0 || got.query || got.prefix != "" {
			t.Fatalf("decodeBody returned malformed fields %+v", got)
		}
		if blank && len(got.raw) != 0 {
			t.Fatalf("blank optional body read as %s", fzDump(got.raw))
		}
		fzCheckAccessors(t, got, nil, fzTopFields, map[string][]string{"client": fzClientFields})
	})
}

// fzUnfitText reports whether a string is not storable text.
func fzUnfitText(s string) bool { return strings.ContainsRune(s, 0) || !utf8.ValidString(s) }

// fzEscape splits the inside of a JSON string into escapes and runs of
// other characters.
var fzEscape = regexp.MustCompile(`\\(?:u[0-9a-fA-F]{4}|.)|[^\\]+`)

// fzUnfitJSON reports whether raw is a JSON string that does not read as
// storable text: invalid UTF-8, an escaped NUL, or an escaped half of a
// surrogate pair without its other half.
func fzUnfitJSON(raw json.RawMessage) bool {
	var s string
	if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
		return false
	}
	if !utf8.Valid(raw) || strings.ContainsRune(s, 0) {
		return true
	}
	parts := fzEscape.FindAll(raw[1:len(raw)-1], -1)
	escaped := func(i int) rune {
		if i < 0 || i >= len(parts) || len(parts[i]) != 6 || parts[i][1] != 'u' {
			return -1
		}
		v, _ := strconv.ParseUint(string(parts[i][2:]), 16, 32)
		return rune(v)
	}
	for i := range parts {
		switch r := escaped(i); {
		case 0xDC00 <= r && r <= 0xDFFF:
			if p := escaped(i - 1); !(0xD800 <= p && p <= 0xDBFF) {
				return true
			}
		case 0xD800 <= r && r <= 0xDBFF:
			if n := escaped(i + 1); !(0xDC00 <= n && n <= 0xDFFF) {
				return true
			}
		}
	}
	return false
}

func fzShort(b []byte) string {
	if len(b) > 200 {
		return string(b[:200]) + "..."
	}
	return string(b)
}

var fzQueries = []string{
	"unit_id=u1&service_id=s1&date=2026-06-15&barber_id=b1",
	"unit_id=u1&service_id=s1&date=2024-02-29",
	"date=2027-03-28T01%3A30%3A00",
	"limit=10&peek=true",
	"limit=abc&peek=maybe",
	"limit=+5&peek=T",
	"limit=-0&peek=0",
	"limit=1.0&peek=yes",
	"limit=1e3",
	"limit=99999999999999999999&peek=1",
	"limit=%E2%82%AC&peek=%00",
	"limit=&peek=&unit_id=",
	"limit=1&limit=2&peek=false&peek=true",
	"limit=null&peek=null&unit_id=null",
	"client=x&client.name=y",
	"unit_id=%FF%FE&name=%C3",
	"unit_id=%zz&limit=5",
	"a;b=c&limit=5",
	"unit_id=a+b&service_id=%2B",
	"unit_id=%E2%80%AE%F0%9F%98%80",
	"=&&==&limit",
	"",
	"unit_id=a&unit_id=b&barber_id=&barber_id=x&date=%zz&date=2027-03-02",
	"unit_id=%zz&unit_id=ok&service_id=%C3%28&barber_id=%FF",
	"un%69t_id=x&unit_id=y&service_id;x=1&date=1",
}

func FuzzQueryFields(f *testing.F) {
	for _, q := range fzQueries {
		f.Add(q)
	}
	f.Fuzz(func(t *testing.T, q string) {
		r := httptest.NewRequest(http.MethodGet, "/v1/availability", nil)
		r.URL.RawQuery = q
		got := queryFields(r)
		if got == nil || got.raw == nil || got.problems == nil || len(*got.problems) != 0 || !got.query || got.prefix != "" {
			t.Fatalf("queryFields returned malformed fields %+v", got)
		}
		vals, _ := url.ParseQuery(q)
		for k, raw := range got.raw {
			var s string
			if err := json.Unmarshal(raw, &s); err != nil {
				t.Fatalf("parameter %q held %s, not a JSON string", k, raw)
			}
			if v := vals[k]; len(v) == 0 || utf8.ValidString(v[0]) && s != v[0] {
				t.Fatalf("parameter %q read as %q, want the first of %q", k, s, v)
			}
		}
		for k, v := range vals {
			if _, ok := got.raw[k]; !ok && len(v) > 0 {
				t.Fatalf("parameter %q = %q was dropped", k, v)
			}
		}
		for k, v := range vals {
			if (got.unfit[k] != "") != fzUnfitText(v[0]) {
				t.Fatalf("parameter %q = %q: unfit %q", k, v[0], got.unfit[k])
			}
		}
		fzCheckAccessors(t, got, vals, fzTopFields, map[string][]string{"client": fzClientFields})
	})
}

// The availability query is read without url.Values, as Get would read it.
func FuzzParseAvailabilityQuery(f *testing.F) {
	for _, q := range fzQueries {
		f.Add(q)
	}
	f.Fuzz(func(t *testing.T, q string) {
		got := parseAvailabilityQuery(q)
		vals, _ := url.ParseQuery(q)
		get := vals.Get // as sent: the resolver refuses text that is not
		if got.unitID != get("unit_id") || got.serviceID != get("service_id") || got.date != get("date") {
			t.Fatalf("%q read as %+v, want %q %q %q", q, got, vals.Get("unit_id"), vals.Get("service_id"), vals.Get("date"))
		}
		if _, ok := vals["barber_id"]; ok != (got.barberID != nil) || ok && *got.barberID != get("barber_id") {
			t.Fatalf("%q: barber_id read as %v, want %q", q, got.barberID, vals["barber_id"])
		}
	})
}
