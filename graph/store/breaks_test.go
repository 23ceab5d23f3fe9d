package store_test

import (
	"encoding/json"
	"slices"
	"testing"

	"barberd/graph/store"
)

// Working hours' breaks read as encoding/json reads them, whatever the
// text: the plain form ent writes without it, the rest through it.
func FuzzParseBreaks(f *testing.F) {
	for _, s := range []string{
		`["12:00-13:00"]`, `["10:30-10:45","13:00-14:00"]`, `[]`, ` [ ] `, `null`, ``, `[""]`,
		`[ "12:00-13:00" , "15:00-15:15" ]`, `["a\"b"]`, `["a\\b"]`, `["\u00e9"]`, "[\"a\x01\"]",
		`["a,b"]`, `["a","b",]`, `["a"`, `"a"]`, `[1]`, `["\xff"]`, "[\"é\"]", `[,]`, `["a" "b"]`,
		"\u00a0[\"a\"]", `[" a "]`, `["a"]x`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := store.ParseBreaks(s)
		var want []string
		wantErr := json.Unmarshal([]byte(s), &want)
		if (err != nil) != (wantErr != nil) || !slices.Equal(got, want) || (got == nil) != (want == nil) {
			t.Fatalf("%q: %q (%v), encoding/json %q (%v)", s, got, err, want, wantErr)
		}
	})
}
