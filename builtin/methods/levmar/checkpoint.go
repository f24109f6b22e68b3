package levmar

import (
	"github.com/kinfer/kinfer/builtin/methods/internal/multistart"
)

// SaveState implements abi.Checkpointer: the whole run state as JSON, so
// that LoadState into a fresh method with the same settings (after Init
// with the same problem) continues bit-identically. The method draws no
// random numbers (its starts are the host's init points and prior draws).
// It may be called between any two calls, also between Ask and Tell.
func (m *Method) SaveState() ([]byte, error) {
	return multistart.Save("levmar", m.inited, &m.st)
}

// LoadState implements abi.Checkpointer. The method must have been built
// with the same settings and initialised with the same problem (dimension
// and seed); anything else is refused with an error saying what differs,
// and the method is left unchanged.
func (m *Method) LoadState(b []byte) error {
	var s state
	header := func() error { return s.Header.Check("levmar", m.st.Header) }
	if err := multistart.Load("levmar", m.inited, b, &s, header, s.check); err != nil {
		return err
	}
	m.st = s
	return nil
}

// check verifies the shapes of a decoded state, so that a damaged
// checkpoint gives an error rather than a panic later.
func (s *state) check() error {
	shapeOK := func(k int) bool { return s.Runs[k].checkShape(s.D) && s.Runs[k].Fac.N == s.N }
	return s.Starts.Check(s.Config.Starts, s.D, len(s.Runs), s.status, shapeOK)
}
