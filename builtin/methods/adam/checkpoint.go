package adam

import (
	"fmt"

	"github.com/kinfer/kinfer/builtin/methods/internal/multistart"
)

// SaveState implements abi.Checkpointer: the whole run state as JSON, so
// that LoadState into a fresh method with the same settings (after Init
// with the same problem) continues bit-identically. Adam draws no random
// numbers of its own (its starting points are the host's prior draws), so
// there is no stream to save. It may be called between any two calls, also
// between Ask and Tell: the restored method asks the same batch again.
func (m *Method) SaveState() ([]byte, error) {
	return multistart.Save("adam", m.inited, &m.st)
}

// LoadState implements abi.Checkpointer. The method must have been built
// with the same settings and initialised with the same problem (dimension
// and seed); anything else is refused with an error saying what differs,
// and the method is left unchanged.
func (m *Method) LoadState(b []byte) error {
	var s state
	header := func() error { return s.Header.Check("adam", m.st.Header) }
	if err := multistart.Load("adam", m.inited, b, &s, header, s.check); err != nil {
		return err
	}
	m.st = s
	return nil
}

// check verifies the shapes of a decoded state, so that a damaged
// checkpoint gives an error rather than a panic later.
func (s *state) check() error {
	n, d := s.Config.Starts, s.D
	for _, l := range []struct {
		name      string
		got, want int
	}{{"runs", len(s.Runs), n}, {"init_draws", len(s.InitDraws), n}, {"traces", len(s.Traces), n}} {
		if l.got != l.want {
			return fmt.Errorf("%s has %d entries, want %d", l.name, l.got, l.want)
		}
	}
	for k, r := range s.Runs {
		if r != nil && !r.check(d) {
			return fmt.Errorf("run %d has the wrong shape for d = %d", k, d)
		}
		tr := s.Traces[k]
		if len(tr.LogTarget) != len(tr.Iteration) || (s.Config.TraceTheta && len(tr.Theta) != len(tr.Iteration)) {
			return fmt.Errorf("trace %d has inconsistent lengths", k)
		}
	}
	return s.Schedule.Check(n, s.status)
}
