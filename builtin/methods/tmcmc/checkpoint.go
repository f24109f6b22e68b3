package tmcmc

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/internal/strictjson"
)

// f64s is a float slice that marshals to JSON as the base64 of its
// little-endian IEEE-754 bits: exact, compact, and able to hold the −∞ log
// likelihoods of failed points, which JSON numbers cannot.
type f64s []float64

func (v f64s) bytes() []byte {
	b := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(x))
	}
	return b
}

// MarshalJSON implements json.Marshaler.
func (v f64s) MarshalJSON() ([]byte, error) {
	return json.Marshal(base64.StdEncoding.EncodeToString(v.bytes()))
}

// UnmarshalJSON implements json.Unmarshaler.
func (v *f64s) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	raw, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return err
	}
	if len(raw)%8 != 0 {
		return fmt.Errorf("float array of %d bytes is not a multiple of 8", len(raw))
	}
	out := make(f64s, len(raw)/8)
	for i := range out {
		out[i] = math.Float64frombits(binary.LittleEndian.Uint64(raw[8*i:]))
	}
	*v = out
	return nil
}

// SaveState implements abi.Checkpointer: the whole run state as JSON with
// the PCG state, so that LoadState into a fresh method with the same
// settings (after Init with the same problem) continues bit-identically. It
// may be called between any two calls, also between an Ask and its Tell.
func (m *Method) SaveState() ([]byte, error) {
	if !m.inited {
		return nil, errors.New("tmcmc: SaveState before Init")
	}
	s := m.st
	b, err := m.rng.MarshalBinary()
	if err != nil {
		return nil, fmt.Errorf("tmcmc: saving the random stream: %w", err)
	}
	s.RNG = b
	out, err := json.Marshal(&s)
	if err != nil {
		return nil, fmt.Errorf("tmcmc: saving state: %w", err)
	}
	return out, nil
}

// LoadState implements abi.Checkpointer. The method must have been built
// with the same settings and initialised with the same problem (dimension
// and seed); anything else is refused with an error saying what differs, and
// the method is left unchanged.
func (m *Method) LoadState(b []byte) error {
	if !m.inited {
		return errors.New("tmcmc: LoadState before Init")
	}
	var s state
	if err := strictjson.Decode(b, &s, strictjson.Lenient); err != nil {
		return fmt.Errorf("tmcmc: reading checkpoint: %w", err)
	}
	if err := s.Header.Check("tmcmc", m.st.Header); err != nil {
		return err
	}
	if err := s.check(); err != nil {
		return fmt.Errorf("tmcmc: corrupt checkpoint: %w", err)
	}
	for i, k := range s.Kinds {
		if k != mapIdentity && (m.cfg.Proposal == Reject || k != fullKind(m.bounds.Lower[i], m.bounds.Upper[i])) {
			return fmt.Errorf("tmcmc: corrupt checkpoint: parameter %d has coordinate map %d, impossible for its bounds [%g, %g]", i, k, m.bounds.Lower[i], m.bounds.Upper[i])
		}
	}
	rng := new(rand.PCG)
	if err := rng.UnmarshalBinary(s.RNG); err != nil {
		return fmt.Errorf("tmcmc: corrupt checkpoint: random stream: %w", err)
	}
	s.RNG = nil
	if s.Stages == nil {
		s.Stages = []stage{}
	}
	m.st, m.rng, m.rnd = s, rng, rand.New(rng)
	m.setCoords()
	return nil
}

// check verifies the shapes of a decoded state, so that a damaged
// checkpoint gives an error rather than a panic later.
func (s *state) check() error {
	n, d := s.Config.Chains, s.D
	lens := []struct {
		name      string
		got, want int
	}{
		{"x", len(s.X), n * d}, {"log_prior", len(s.LogPrior), n}, {"log_lik", len(s.LogLik), n},
		{"log_w", len(s.LogW), n}, {"scale0", len(s.Scale0), d}, {"parent", len(s.Parent), n},
		{"u", len(s.U), n * d}, {"scale0_u", len(s.Scale0U), d}, {"kinds", len(s.Kinds), d}, {"log_j", len(s.LogJ), n}, {"eve", len(s.Eve), n}, {"eve_sum", len(s.EveSum), n},
	}
	if s.Phase == phaseStages {
		lens = append(lens, struct {
			name      string
			got, want int
		}{"chol", len(s.Chol), d * d}, struct {
			name      string
			got, want int
		}{"stage_x", len(s.StageX), n * d})
		if len(s.Stages) == 0 {
			return errors.New("stage phase without a stage record")
		}
	}
	if s.Pending {
		lens = append(lens, struct {
			name      string
			got, want int
		}{"proposals", len(s.Proposals), n * d}, struct {
			name      string
			got, want int
		}{"proposals_u", len(s.ProposalsU), n * d}, struct {
			name      string
			got, want int
		}{"proposals_log_j", len(s.PropLogJ), n})
	}
	for _, l := range lens {
		if l.got != l.want {
			return fmt.Errorf("%s has %d entries, want %d", l.name, l.got, l.want)
		}
	}
	for k, p := range s.Parent {
		if p < 0 || p >= n {
			return fmt.Errorf("parent[%d] = %d out of range", k, p)
		}
	}
	for i, k := range s.Kinds {
		if k < mapIdentity || k > mapUpper {
			return fmt.Errorf("kinds[%d] = %d out of range", i, k)
		}
	}
	for k, e := range s.Eve {
		if e < 0 || e >= n {
			return fmt.Errorf("eve[%d] = %d out of range", k, e)
		}
	}
	switch {
	case s.Phase < phaseDraw || s.Phase > phaseDone:
		return fmt.Errorf("unknown phase %d", s.Phase)
	case s.Pending && s.Phase != phaseStages:
		return errors.New("pending proposals outside the stage phase")
	case s.Sub < 0 || s.Sub >= s.Config.Substeps && s.Phase == phaseStages:
		return fmt.Errorf("sub-step %d out of range", s.Sub)
	}
	return nil
}

// HeldPoints implements abi.HeldPoints: the population's points with a
// finite log likelihood, once the prior population is in (a resume
// evaluates them again: audit 16, log likelihoods raised by 500 in a
// saved population gave a log evidence of 325 instead of −165).
func (m *Method) HeldPoints() []abi.Result {
	s := &m.st
	if !m.inited || s.Phase == phaseDraw || s.D == 0 {
		return nil
	}
	n := len(s.X) / s.D
	var out []abi.Result
	for i := range min(n, len(s.LogPrior), len(s.LogLik)) {
		if math.IsInf(s.LogLik[i], 0) || math.IsNaN(s.LogLik[i]) {
			continue
		}
		out = append(out, abi.Result{Theta: append([]float64(nil), s.X[i*s.D:(i+1)*s.D]...), Status: abi.OK, LogPrior: s.LogPrior[i], LogLik: s.LogLik[i]})
	}
	return out
}
