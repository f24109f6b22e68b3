package multistart

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/internal/strictjson"
)

// Pending batch kinds (Schedule.Pending).
const (
	None    = 0 // no batch is pending
	Draw    = 1 // host draws for starts not yet started
	Iterate = 2 // the next point of every started run not yet done
)

// Status reports on start k: whether it has a usable starting point
// (started) and whether its run has finished (done).
type Status func(k int) (started, done bool)

// Schedule is the pending batch of a multi-start method. A method embeds it
// in its saved state.
type Schedule struct {
	Pending       int   `json:"pending"`
	PendingStarts []int `json:"pending_starts,omitempty"`
}

// Plan chooses the next batch of n starts unless one is pending (so that an
// Ask repeated before Tell asks the same batch again): draws for the starts
// not yet started while there are any, else the iterates of the started
// runs not yet done.
func (s *Schedule) Plan(n int, status Status) {
	if s.Pending != None {
		return
	}
	s.PendingStarts = s.PendingStarts[:0]
	for k := 0; k < n; k++ {
		if started, _ := status(k); !started {
			s.PendingStarts = append(s.PendingStarts, k)
		}
	}
	s.Pending = Draw
	if len(s.PendingStarts) == 0 {
		for k := 0; k < n; k++ {
			if _, done := status(k); !done {
				s.PendingStarts = append(s.PendingStarts, k)
			}
		}
		s.Pending = Iterate
	}
}

// Ask is abi.Method.Ask of the method named method, initialised (inited)
// or not, with n starts: it plans the next batch (Plan) and returns it,
// Draw points with want, or with want the points point(k) (copied) of the
// pending starts k, in start order. Before Init and once every start is
// done it is an error.
func (s *Schedule) Ask(method string, inited bool, n int, status Status, want abi.Want, point func(k int) []float64) (abi.Batch, error) {
	if !inited {
		return abi.Batch{}, fmt.Errorf("%s: Ask before Init", method)
	}
	if AllDone(n, status) {
		return abi.Batch{}, fmt.Errorf("%s: Ask after the run is done", method)
	}
	s.Plan(n, status)
	if s.Pending == Draw {
		return abi.Batch{Draw: len(s.PendingStarts), Want: want}, nil
	}
	pts := make([][]float64, len(s.PendingStarts))
	for i, k := range s.PendingStarts {
		pts[i] = append([]float64(nil), point(k)...)
	}
	return abi.Batch{Points: pts, Want: want}, nil
}

// AllDone reports whether all n starts have started and finished.
func AllDone(n int, status Status) bool {
	for k := 0; k < n; k++ {
		if _, done := status(k); !done {
			return false
		}
	}
	return true
}

// Take ends the pending batch and returns its starts and kind.
func (s *Schedule) Take() (starts []int, kind int) {
	starts, kind = s.PendingStarts, s.Pending
	s.Pending, s.PendingStarts = None, nil
	return starts, kind
}

// Check verifies a decoded schedule of n starts: known kind, starts in
// range and not repeated, draws pending only for starts not started and
// iterates only for started runs not done.
func (s *Schedule) Check(n int, status Status) error {
	seen := map[int]bool{}
	for _, k := range s.PendingStarts {
		if k < 0 || k >= n || seen[k] {
			return fmt.Errorf("pending start %d out of range or repeated", k)
		}
		seen[k] = true
		started, done := status(k)
		switch s.Pending {
		case Draw:
			if started {
				return fmt.Errorf("start %d is pending a draw but has started", k)
			}
		case Iterate:
			if !started || done {
				return fmt.Errorf("start %d is pending an iterate but has not started or is done", k)
			}
		}
	}
	switch s.Pending {
	case None, Draw, Iterate:
	default:
		return fmt.Errorf("unknown pending kind %d", s.Pending)
	}
	if s.Pending != None && len(s.PendingStarts) == 0 {
		return errors.New("a batch is pending but names no start")
	}
	return nil
}

// Counts are the results a run has been told. A method embeds it in its
// saved state.
type Counts struct {
	// Evaluations counts the results with status OK or failed; Failures
	// the failed ones; OutOfSupport the points outside the prior's support
	// (not evaluated).
	Evaluations  int `json:"evaluations"`
	Failures     int `json:"failures"`
	OutOfSupport int `json:"out_of_support"`
}

// Add counts a batch of results.
func (c *Counts) Add(results []abi.Result) {
	for _, r := range results {
		switch r.Status {
		case abi.OK:
			c.Evaluations++
		case abi.OutOfSupport:
			c.OutOfSupport++
		default:
			c.Evaluations++
			c.Failures++
		}
	}
}

// Save returns the JSON of a method's state st, once the method is
// initialised (inited); method names the method in errors.
func Save(method string, inited bool, st any) ([]byte, error) {
	if !inited {
		return nil, fmt.Errorf("%s: SaveState before Init", method)
	}
	b, err := json.Marshal(st)
	if err != nil {
		return nil, fmt.Errorf("%s: saving state: %w", method, err)
	}
	return b, nil
}

// Load decodes the checkpoint b into st (a pointer to a fresh state) of an
// initialised method (inited), then
// runs header, whose error (that the checkpoint is of another run: other
// settings, dimension or seed) is returned as it is, and shape, whose error
// is reported as a corrupt checkpoint. The caller adopts st only when Load
// returns nil.
func Load(method string, inited bool, b []byte, st any, header, shape func() error) error {
	if !inited {
		return fmt.Errorf("%s: LoadState before Init", method)
	}
	if err := strictjson.Decode(b, st, strictjson.Lenient); err != nil {
		return fmt.Errorf("%s: reading checkpoint: %w", method, err)
	}
	if err := header(); err != nil {
		return err
	}
	if err := shape(); err != nil {
		return fmt.Errorf("%s: corrupt checkpoint: %w", method, err)
	}
	return nil
}
