package storetest

import (
	"slices"
	"testing"
)

func TestDialectsNamed(t *testing.T) {
	for names, want := range map[string][]string{
		"":                   {"sqlite3", "postgres"},
		" ":                  {"sqlite3", "postgres"},
		"postgres":           {"postgres"},
		"sqlite3":            {"sqlite3"},
		"postgres, sqlite3":  {"sqlite3", "postgres"},
		"postgres,postgres ": {"postgres"},
	} {
		if got := dialects(names); !slices.Equal(got, want) {
			t.Errorf("BARBERD_TEST_DIALECTS=%q: %v, want %v", names, got, want)
		}
	}
	for _, bad := range []string{"pg", "postgres,", "sqlite"} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("BARBERD_TEST_DIALECTS=%q was taken", bad)
				}
			}()
			dialects(bad)
		}()
	}
}
