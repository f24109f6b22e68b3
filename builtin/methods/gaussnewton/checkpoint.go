package gaussnewton

import (
	"encoding/json"
	"errors"
	"fmt"
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
	b, err := json.Marshal(&m.st)
	if err != nil {
		return nil, fmt.Errorf("gaussnewton: saving state: %w", err)
	}
	return b, nil
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
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("gaussnewton: reading checkpoint: %w", err)
	}
	if err := s.Header.Check("gaussnewton", m.st.Header); err != nil {
		return err
	}
	if err := s.check(); err != nil {
		return fmt.Errorf("gaussnewton: corrupt checkpoint: %w", err)
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
	seen := map[int]bool{}
	for _, k := range s.PendingStarts {
		if k < 0 || k >= n || seen[k] {
			return fmt.Errorf("pending start %d out of range or repeated", k)
		}
		seen[k] = true
		switch s.Pending {
		case pendDraw:
			if s.Runs[k] != nil {
				return fmt.Errorf("start %d is pending a draw but has started", k)
			}
		case pendIterate:
			if s.Runs[k] == nil || s.Runs[k].Done {
				return fmt.Errorf("start %d is pending an iterate but has not started or is done", k)
			}
		}
	}
	switch s.Pending {
	case pendNone, pendDraw, pendIterate:
	default:
		return fmt.Errorf("unknown pending kind %d", s.Pending)
	}
	if s.Pending != pendNone && len(s.PendingStarts) == 0 {
		return errors.New("a batch is pending but names no start")
	}
	return nil
}
