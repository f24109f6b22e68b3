package run

import (
	"strings"
	"testing"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/builtin/methods/adam"
	"github.com/kinfer/kinfer/builtin/methods/anneal"
	"github.com/kinfer/kinfer/builtin/methods/tmcmc"
	"github.com/kinfer/kinfer/host/target"
)

// The builtin methods that say where they are.
var (
	_ Progresser = (*tmcmc.Method)(nil)
	_ Progresser = (*adam.Method)(nil)
	_ Progresser = (*anneal.Method)(nil)
)

type progMethod struct {
	abi.Method
	status string
	f      float64
}

func (m progMethod) Progress() (string, float64) { return m.status, m.f }

// The progress line says where the method is and, when it knows the
// fraction done, the time left: a quarter done after 30 s leaves 90 s.
// A method without the capability, or with an unknown fraction, gets no
// ETA.
func TestProgressLine(t *testing.T) {
	c := target.Counts{Evaluations: 3000, Failed: 2}
	got := progressLine(c, progMethod{status: "iteration 250/1000", f: 0.25}, 30)
	for _, want := range []string{"iteration 250/1000", "3000 evaluations (2 failed)", "100/s", "30.0s", "25%, ETA 1m30s"} {
		if !strings.Contains(got, want) {
			t.Errorf("%q lacks %q", got, want)
		}
	}
	got = progressLine(c, progMethod{status: "stage 3: q 0.01 → 0.05", f: -1}, 30)
	if !strings.Contains(got, "stage 3") || strings.Contains(got, "ETA") {
		t.Errorf("unknown fraction: %q", got)
	}
	if got := progressLine(c, nil, 7200); strings.Contains(got, "ETA") || !strings.Contains(got, "2h00m") {
		t.Errorf("no capability: %q", got)
	}
}
