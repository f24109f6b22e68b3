package design

import (
	"errors"
	"reflect"
	"testing"
)

// A closed Done stops the maximin search at once with ErrStopped (audit 6:
// Ctrl-C waited for the whole search, a minute at n = 10 000); an open one
// changes nothing.
func TestMaximinStops(t *testing.T) {
	done := make(chan struct{})
	close(done)
	if _, err := LatinHypercube(3000, 3, 1, LHSOptions{Maximin: true, Done: done}); !errors.Is(err, ErrStopped) {
		t.Fatalf("closed Done: %v, want ErrStopped", err)
	}
	open := make(chan struct{})
	a, err := LatinHypercube(50, 3, 1, LHSOptions{Maximin: true, Done: open})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := LatinHypercube(50, 3, 1, LHSOptions{Maximin: true})
	if !reflect.DeepEqual(a, b) {
		t.Error("an open Done changed the design")
	}
}
