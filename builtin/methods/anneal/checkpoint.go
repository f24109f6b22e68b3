package anneal

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/kinfer/kinfer/builtin/methods/adam"
	"github.com/kinfer/kinfer/internal/strictjson"
)

// SaveState implements abi.Checkpointer: the whole run state as JSON,
// including the PCG state of the method's stream, so that LoadState into a
// fresh method with the same settings (after Init with the same problem)
// continues bit-identically. It may be called between any two calls, also
// between Ask and Tell: the restored method asks the same point again.
func (m *Method) SaveState() ([]byte, error) {
	if !m.inited {
		return nil, errors.New("anneal: SaveState before Init")
	}
	s := m.st
	var err error
	if s.RNG, err = m.rng.MarshalBinary(); err != nil {
		return nil, fmt.Errorf("anneal: saving the stream: %w", err)
	}
	b, err := json.Marshal(&s)
	if err != nil {
		return nil, fmt.Errorf("anneal: saving state: %w", err)
	}
	return b, nil
}

// LoadState implements abi.Checkpointer. The method must have been built
// with the same settings and initialised with the same problem (dimension
// and seed); anything else is refused with an error saying what differs,
// and the method is left unchanged.
func (m *Method) LoadState(b []byte) error {
	if !m.inited {
		return errors.New("anneal: LoadState before Init")
	}
	var s state
	if err := strictjson.Decode(b, &s, strictjson.Lenient); err != nil {
		return fmt.Errorf("anneal: reading checkpoint: %w", err)
	}
	if err := s.Header.Check("anneal", m.st.Header); err != nil {
		return err
	}
	if err := s.check(); err != nil {
		return fmt.Errorf("anneal: corrupt checkpoint: %w", err)
	}
	rng := new(rand.PCG)
	if err := rng.UnmarshalBinary(s.RNG); err != nil {
		return fmt.Errorf("anneal: corrupt checkpoint: stream: %w", err)
	}
	s.RNG = nil
	m.st, m.rng, m.rnd = s, rng, rand.New(rng)
	return nil
}

// check verifies the shapes of a decoded state, so that a damaged
// checkpoint gives an error rather than a panic later.
func (s *state) check() error {
	d := s.D
	started := s.Phase != phInit
	vecs := []struct {
		name string
		v    []float64
		need bool
	}{
		{"x", s.X, started}, {"best", s.Best, started}, {"x_min", s.XMin, started},
		{"point", s.Point, s.Pending && s.Phase != phInit},
		{"ls_from", s.LSFrom, s.Phase == phLocal},
		{"ls_best", s.LSBest, false},
	}
	for _, v := range vecs {
		if (v.need || v.v != nil) && len(v.v) != d {
			return fmt.Errorf("%s has %d entries, want %d", v.name, len(v.v), d)
		}
	}
	switch s.Phase {
	case phInit, phRestart, phChain, phDone:
	case phLocal:
		if !adam.CheckRun(s.LS, d) || (s.LSKind != lsFromBest && s.LSKind != lsFromMin) {
			return errors.New("local search state is missing or misshapen")
		}
	default:
		return fmt.Errorf("unknown phase %d", s.Phase)
	}
	if s.Phase == phInit && s.Pending && s.Point != nil {
		return errors.New("a prior draw is pending but a point is stored")
	}
	if s.Phase == phChain && (s.J < 0 || s.J >= 2*d) {
		return fmt.Errorf("visit %d out of range", s.J)
	}
	n := len(s.Trace.Iteration)
	if len(s.Trace.Evaluations) != n || len(s.Trace.BestLogTarget) != n {
		return errors.New("trace has inconsistent lengths")
	}
	want := 0
	if s.Config.TraceTheta {
		want = n
	}
	if len(s.Trace.BestTheta) != want {
		return fmt.Errorf("trace has %d best points for %d trace points (trace_theta %v)", len(s.Trace.BestTheta), n, s.Config.TraceTheta)
	}
	for _, th := range s.Trace.BestTheta {
		if len(th) != d {
			return fmt.Errorf("a traced best point has %d entries, want %d", len(th), d)
		}
	}
	return nil
}
