package fresh

import "testing"

// A memo never keeps more than its budget, keeps what fits, and refuses an
// entry that costs more than the whole budget.
func TestMemoBudget(t *testing.T) {
	m := NewMemo[int, string](10, func(s string) int { return len(s) })
	for i := range 20 {
		m.Put(i, "abc")
		if m.spent > 10 {
			t.Fatalf("spent %d of a budget of 10", m.spent)
		}
		if v, ok := m.Get(i); !ok || v != "abc" {
			t.Fatalf("entry %d not kept: %q %v", i, v, ok)
		}
	}
	m.Put(100, "abcdefghijk")
	if _, ok := m.Get(100); ok {
		t.Fatal("kept an entry over the whole budget")
	}
	m.Put(19, "abcdefghij") // replaces its own entry, and room is made
	if v, _ := m.Get(19); v != "abcdefghij" || m.spent != 10 {
		t.Fatalf("got %q, spent %d", v, m.spent)
	}
	m.Drop(19)
	if _, ok := m.Get(19); ok || m.spent != 0 {
		t.Fatalf("dropped entry kept, spent %d", m.spent)
	}
}
