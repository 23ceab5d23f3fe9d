package wake_test

import (
	"slices"
	"testing"

	"barberd/graph/wake"
)

// Wakes sent before the worker looks coalesce into one signal and one set.
func TestSet(t *testing.T) {
	s := wake.New()
	s.Wake("a", "b")
	s.Wake("b")
	select {
	case <-s.C():
	default:
		t.Fatal("no signal after a wake")
	}
	select {
	case <-s.C():
		t.Fatal("two signals for wakes the worker had not taken")
	default:
	}
	got := s.Take()
	slices.Sort(got)
	if !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("Take = %v, want [a b]", got)
	}
	if got := s.Take(); len(got) != 0 {
		t.Errorf("second Take = %v, want none", got)
	}
}
