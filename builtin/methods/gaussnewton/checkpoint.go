package gaussnewton

import (
	"errors"
	"fmt"

	"github.com/kinfer/kinfer/builtin/methods/internal/multistart"
)

// SaveState implements abi.Checkpointer: the whole run state as JSON, so
// that LoadState into a fresh method with the same settings (after Init
// with the same problem) continues bit-identically. The method draws no
// random numbers (its starts are the host's init points and prior draws).
// It may be called between any two calls, also between Ask and Tell.
func (m *Method) SaveState() ([]byte, error) {
	if !m.inited {
		return nil, errors.New("gaussnewton: SaveState before Init")
	}
	return multistart.Save("gaussnewton", &m.st)
}

// LoadState implements abi.Checkpointer. The method must have been built
// with the same settings and initialised with the same problem (dimension
// and seed); anything else is refused with an error saying what differs,
// and the method is left unchanged.
func (m *Method) LoadState(b []byte) error {
	if !m.inited {
		return errors.New("gaussnewton: LoadState before Init")
	}
	var s state
	header := func() error { return s.Header.Check("gaussnewton", m.st.Header) }
	if err := multistart.Load("gaussnewton", b, &s, header, s.check); err != nil {
		return err
	}
	m.st = s
	return nil
}

// check verifies the shapes of a decoded state, so that a damaged
// checkpoint gives an error rather than a panic later.
func (s *state) check() error {
	n, d := s.Config.Starts, s.D
	if len(s.Runs) != n || len(s.InitDraws) != n {
		return fmt.Errorf("%d runs and %d draw counts, want %d", len(s.Runs), len(s.InitDraws), n)
	}
	for k, r := range s.Runs {
		if r != nil && (!r.checkShape(d) || r.Fac.N != s.N) {
			return fmt.Errorf("run %d has the wrong shape for d = %d, n = %d", k, d, s.N)
		}
	}
	return s.Schedule.Check(n, s.status)
}
