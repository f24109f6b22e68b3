package wasm

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/kinfer/kinfer/abi"
)

// busyMachine starts CPU hogs in other processes, two per core, until the
// test ends: "full machine load".
func busyMachine(t *testing.T) {
	for i := 0; i < 2*runtime.NumCPU(); i++ {
		cmd := exec.Command("sh", "-c", "while :; do :; done")
		if err := cmd.Start(); err != nil {
			t.Skipf("cannot start a CPU hog: %v", err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	}
	time.Sleep(50 * time.Millisecond)
}

// spinFault evaluates the spin plugin (an endless loop in
// kinfer_model_eval) under the given limits and returns the fault and the
// time to it.
func spinFault(t *testing.T, fuel int64, timeoutMS int) (*Error, time.Duration) {
	t.Helper()
	p := loadPlugin(t, "host/testdata/plugins/spin")
	m := *p.Manifest
	m.Limits.Fuel, m.Limits.TimeoutMS = fuel, timeoutMS
	r := newRT(t, nil)
	q, err := r.Load(context.Background(), &m)
	if err != nil {
		t.Fatal(err)
	}
	mdl, err := q.Model(context.Background(), nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer mdl.(interface{ Close() error }).Close()
	start := time.Now()
	st := mdl.Eval([]float64{0.5}, []float64{1, 2}, make([]float64, 2))
	el := time.Since(start)
	if st != abi.Timeout {
		t.Fatalf("status %v, want timeout", st)
	}
	var e *Error
	if !errors.As(mdl.(abi.Faulter).Fault(), &e) {
		t.Fatalf("fault %v", mdl.(abi.Faulter).Fault())
	}
	return e, el
}

// A spinning plugin is stopped by timeout_ms within 100 ms of it, on an
// idle machine and with every core busy; and by its fuel, with the same
// deterministic fault whatever the load. (Bounds on elapsed time are the
// behaviour under test here, not a speed target.)
func TestSpinStoppedIdleAndUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("starts CPU hogs")
	}
	const timeoutMS, slack = 200, 100 * time.Millisecond
	for _, loaded := range []bool{false, true} {
		t.Run(fmt.Sprintf("loaded=%v", loaded), func(t *testing.T) {
			if loaded {
				busyMachine(t)
			}
			e, el := spinFault(t, 0, timeoutMS)
			if !strings.Contains(e.Msg, "exceeded timeout_ms=200 (wall clock)") || !e.Transient {
				t.Errorf("wall-clock fault: %+v", e)
			}
			if limit := timeoutMS*time.Millisecond + slack; el > limit {
				t.Errorf("stopped after %v, want within %v", el, limit)
			}
			t.Logf("timeout_ms=%d: stopped after %v", timeoutMS, el)
			e, el = spinFault(t, 300_000_000, 60_000)
			if !strings.HasPrefix(e.Msg, "exceeded its fuel budget of 300000000 ") || e.Transient || e.Status != abi.Timeout {
				t.Errorf("fuel fault: %+v", e)
			}
			t.Logf("fuel 3e8 exhausted after %v", el)
		})
	}
}

// random_get restarts at every call (ABI.md §8): the same point gives the
// same bytes on one instance called again and on another instance, so a
// plugin that reads it cannot make results depend on the worker count.
// sleep returns at once and the clocks do not advance.
func TestRandomGetPerCallAndSleep(t *testing.T) {
	r := newRT(t, nil)
	p := load(t, r, testManifest("wasi", "wasi.wasm", abi.KindModel, 0, 0))
	eval := func(m abi.Model, a float64) []float64 {
		y := make([]float64, 2)
		if st := m.Eval([]float64{a, 0}, []float64{1}, y); st != abi.OK {
			t.Fatalf("eval %v: %v", a, st)
		}
		return y
	}
	m1, err := p.Model(context.Background(), []float64{1}, 1)
	if err != nil {
		t.Fatal(err)
	}
	m2, err := p.Model(context.Background(), []float64{1}, 1)
	if err != nil {
		t.Fatal(err)
	}
	first := eval(m1, 557)
	if first[0] == first[1] {
		t.Errorf("two reads within a call gave the same bytes: %v", first)
	}
	eval(m1, 1) // another call in between
	for _, y := range [][]float64{eval(m1, 557), eval(m2, 557)} {
		if y[0] != first[0] || y[1] != first[1] {
			t.Errorf("random_get in a later call or another instance: %v, first call %v", y, first)
		}
	}
	start := time.Now()
	if y := eval(m1, 558); y[0] != 0 {
		t.Errorf("the monotonic clock advanced by %v ns over sleep(5)", y[0])
	}
	if el := time.Since(start); el > 2*time.Second {
		t.Errorf("sleep(5) took %v", el)
	}
}

// A method's samples, report and save get one call's fuel per
// pointsPerFuel points told (at least one), and after a load at least the
// load's own scale: their work grows with the run (ABI.md §8).
func TestMethodBookkeepingFuelScale(t *testing.T) {
	w := &method{}
	for _, c := range []struct {
		told   int64
		loaded int
		want   int
	}{{0, 0, 1}, {9_999, 0, 1}, {10_000, 0, 2}, {145_000, 0, 15}, {0, 12, 12}, {300_000, 12, 31}, {1 << 62, 0, 1 + 1<<20}} {
		w.told, w.loaded = c.told, c.loaded
		if got := w.bookScale(); got != c.want {
			t.Errorf("told %d, loaded %d: scale %d, want %d", c.told, c.loaded, got, c.want)
		}
	}
}

// A misspelt capability gets the nearest known one of the component's
// kind (within two edits); a capability far from every known one, or
// known only for another kind, gets none.
func TestNearCapability(t *testing.T) {
	for _, c := range []struct {
		cap  string
		kind abi.Kind
		want string
	}{
		{"jacobain", abi.KindModel, "jacobian"},
		{"rows_independant", abi.KindModel, "rows_independent"},
		{"checkpoints", abi.KindMethod, "checkpoint"},
		{"teleport", abi.KindModel, ""},
		{"checkpoint", abi.KindModel, ""},
	} {
		if got := nearCapability(c.cap, c.kind); got != c.want {
			t.Errorf("%q (%s): %q, want %q", c.cap, c.kind, got, c.want)
		}
	}
	if d := editDistance("kitten", "sitting"); d != 3 {
		t.Errorf("editDistance(kitten, sitting) = %d, want 3", d)
	}
}
