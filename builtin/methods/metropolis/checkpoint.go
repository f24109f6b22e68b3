package metropolis

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/internal/strictjson"
)

// SaveState implements abi.Checkpointer: the whole run state as JSON,
// including every chain's PCG state, so that LoadState into a fresh method
// with the same settings (after Init with the same problem) continues
// bit-identically. It may be called between any two calls.
func (m *Method) SaveState() ([]byte, error) {
	if !m.inited {
		return nil, errors.New("metropolis: SaveState before Init")
	}
	s := m.st
	untaken := make([][]abi.Sample, len(m.kept))
	for c, k := range m.kept {
		untaken[c] = k[s.Taken-m.keptFrom:]
	}
	s.Samples, s.SamplesBin = nil, packSamples(untaken, s.D)
	s.RNG = make([][]byte, len(m.rngs))
	for k, g := range m.rngs {
		b, err := g.MarshalBinary()
		if err != nil {
			return nil, fmt.Errorf("metropolis: saving chain %d's stream: %w", k, err)
		}
		s.RNG[k] = b
	}
	b, err := json.Marshal(&s)
	var uv *json.UnsupportedValueError
	if errors.As(err, &uv) {
		// ±∞ in the chains or their adaptation: the chains diverged
		// (review 17: a flat likelihood in a transformed parameter whose
		// x is unbounded made the target improper in x, and the
		// covariance of x overflowed).
		return nil, fmt.Errorf("metropolis: the chains diverged (a value of the state is %s): the target is not proper in the method's coordinates — with [transform], a likelihood flat in a parameter whose x is unbounded; drop the transform of that parameter", uv.Str)
	}
	if err != nil {
		return nil, fmt.Errorf("metropolis: saving state: %w", err)
	}
	return b, nil
}

// LoadState implements abi.Checkpointer. The method must have been built
// with the same settings and initialised with the same problem (dimension
// and seed); anything else is refused with an error saying what differs, and
// the method is left unchanged.
func (m *Method) LoadState(b []byte) error {
	if !m.inited {
		return errors.New("metropolis: LoadState before Init")
	}
	var s state
	if err := strictjson.Decode(b, &s, strictjson.Lenient); err != nil {
		return fmt.Errorf("metropolis: reading checkpoint: %w", err)
	}
	if err := s.Header.Check("metropolis", m.st.Header); err != nil {
		return err
	}
	if s.SamplesBin != nil {
		smp, err := unpackSamples(s.SamplesBin, s.Config.Chains, s.D)
		if err != nil {
			return fmt.Errorf("metropolis: corrupt checkpoint: %w", err)
		}
		s.Samples, s.SamplesBin = smp, nil
	}
	if err := s.check(); err != nil {
		return fmt.Errorf("metropolis: corrupt checkpoint: %w", err)
	}
	rngs := make([]*rand.PCG, len(s.RNG))
	rands := make([]*rand.Rand, len(s.RNG))
	for k, rb := range s.RNG {
		rngs[k] = new(rand.PCG)
		if err := rngs[k].UnmarshalBinary(rb); err != nil {
			return fmt.Errorf("metropolis: corrupt checkpoint: chain %d's stream: %w", k, err)
		}
		rands[k] = rand.New(rngs[k])
	}
	s.RNG = nil
	m.kept, m.keptFrom = s.Samples, s.Taken
	s.Samples = nil
	m.st, m.rngs, m.rands = s, rngs, rands
	return nil
}

// keptSteps is the number of kept steps so far.
func (m *Method) keptSteps() int {
	if m.st.Step <= m.cfg.BurnIn {
		return 0
	}
	return (m.st.Step - m.cfg.BurnIn) / m.cfg.Thin
}

// steps returns the draws of kept steps [from, to), step by step, chains in
// order within a step.
func (m *Method) steps(from, to int) []abi.Sample {
	c := len(m.kept)
	out := make([]abi.Sample, 0, (to-from)*c)
	for k := from; k < to; k++ {
		for ch := range c {
			out = append(out, m.kept[ch][k-m.keptFrom])
		}
	}
	return out
}

// TakeSamples implements abi.SampleStream: the draws of the kept steps
// since the previous call, in output order.
func (m *Method) TakeSamples() []abi.Sample {
	if !m.inited {
		return nil
	}
	to := m.keptSteps()
	out := m.steps(m.st.Taken, to)
	m.st.Taken = to
	return out
}

// RestoreSamples implements abi.SampleStream: after LoadState, the draws
// TakeSamples had handed out when the state was saved.
func (m *Method) RestoreSamples(smp []abi.Sample) error {
	if !m.inited {
		return errors.New("metropolis: RestoreSamples before Init")
	}
	c, d := len(m.kept), m.st.D
	if len(smp) != m.keptFrom*c {
		return fmt.Errorf("metropolis: RestoreSamples got %d draws, the state needs %d (%d kept steps × %d chains)", len(smp), m.keptFrom*c, m.keptFrom, c)
	}
	for i, x := range smp {
		if len(x.Theta) != d {
			return fmt.Errorf("metropolis: restored draw %d has %d values, want %d", i, len(x.Theta), d)
		}
	}
	for ch := range c {
		if m.keptFrom == 0 {
			break
		}
		k := make([]abi.Sample, m.keptFrom, m.keptFrom+len(m.kept[ch]))
		for s := range m.keptFrom {
			k[s] = smp[s*c+ch]
		}
		m.kept[ch] = append(k, m.kept[ch]...)
	}
	m.keptFrom = 0
	// A chain's kept samples change only where it accepted a proposal:
	// its acceptance count after burn-in is at least the changes between
	// consecutive kept samples (exactly, up to its first kept step, when
	// every step is kept); a state whose counts say otherwise is not the
	// journal's (audit 16: accept_kept [1,1,1,1] halved the reported
	// acceptance rate).
	// Between consecutive kept samples a chain either stayed (the same
	// θ and the same log prior and likelihood, bit for bit) or moved by
	// accepted steps, each of which lowers the log target by less than
	// −log u ≤ 53·ln 2 ≈ 36.8 (u ≥ 2⁻⁵³): a sample whose values no
	// chain can reach is not this run's (audit 16: journal rows edited
	// to log likelihoods of −1e300 were resumed).
	maxDrop := 37 * float64(m.cfg.Thin)
	for ch, kept := range m.kept {
		changes := 0
		for i := 1; i < len(kept); i++ {
			a, b := kept[i-1], kept[i]
			if slices.Equal(b.Theta, a.Theta) {
				if math.Float64bits(b.LogPrior) != math.Float64bits(a.LogPrior) || math.Float64bits(b.LogLik) != math.Float64bits(a.LogLik) {
					return fmt.Errorf("metropolis: corrupt checkpoint: chain %d's kept samples %d and %d have the same θ but other log prior or log likelihood", ch, i-1, i)
				}
				continue
			}
			changes++
			if b.LogPrior+b.LogLik < a.LogPrior+a.LogLik-maxDrop {
				return fmt.Errorf("metropolis: corrupt checkpoint: chain %d moved from log target %g to %g between kept samples %d and %d, a fall no accepted step gives", ch, a.LogPrior+a.LogLik, b.LogPrior+b.LogLik, i-1, i)
			}
		}
		acc := m.st.AcceptKept[ch]
		if acc < changes || m.cfg.Thin == 1 && acc > changes+1 {
			return fmt.Errorf("metropolis: corrupt checkpoint: chain %d accepted %d proposals after burn-in, but its %d kept samples change %d times", ch, acc, len(kept), changes)
		}
	}
	return nil
}

// HeldPoints implements abi.HeldPoints: the started chains' current
// positions with the log prior and log likelihood they were told.
func (m *Method) HeldPoints() []abi.Result {
	if !m.inited {
		return nil
	}
	var out []abi.Result
	for c, ok := range m.st.Started {
		if ok {
			out = append(out, abi.Result{Theta: slices.Clone(m.st.X[c]), Status: abi.OK, LogPrior: m.st.LogPrior[c], LogLik: m.st.LogLik[c]})
		}
	}
	return out
}

// check verifies the shapes of a decoded state, so that a damaged
// checkpoint gives an error rather than a panic later.
func (s *state) check() error {
	c, d := s.Config.Chains, s.D
	lens := []struct {
		name      string
		got, want int
	}{
		{"rng", len(s.RNG), c}, {"x", len(s.X), c}, {"log_prior", len(s.LogPrior), c},
		{"log_lik", len(s.LogLik), c}, {"started", len(s.Started), c}, {"init_draws", len(s.InitDraws), c},
		{"s0", len(s.S0), d}, {"acc_mean", len(s.AccMean), d}, {"acc_m2", len(s.AccM2), d * d},
		{"accept_burn", len(s.AcceptBurn), c}, {"accept_kept", len(s.AcceptKept), c}, {"samples", len(s.Samples), c},
	}
	for _, l := range lens {
		if l.got != l.want {
			return fmt.Errorf("%s has %d entries, want %d", l.name, l.got, l.want)
		}
	}
	for k, x := range s.X {
		if len(x) != d {
			return fmt.Errorf("x[%d] has %d entries, want %d", k, len(x), d)
		}
	}
	kept := 0
	if s.Step > s.Config.BurnIn && s.Config.Thin > 0 {
		kept = (s.Step - s.Config.BurnIn) / s.Config.Thin
	}
	if s.Taken < 0 || s.Taken > kept {
		return fmt.Errorf("taken %d of %d kept steps", s.Taken, kept)
	}
	for k, smp := range s.Samples {
		if len(smp) != kept-s.Taken {
			return fmt.Errorf("samples[%d] has %d draws, want %d (kept steps %d, taken %d)", k, len(smp), kept-s.Taken, kept, s.Taken)
		}
		for i, x := range smp {
			if len(x.Theta) != d {
				return fmt.Errorf("samples[%d][%d] has %d values, want %d", k, i, len(x.Theta), d)
			}
		}
	}
	// Values the sampler itself bounds or counts (audit 16: log_lambda
	// 700 froze every chain; accept_kept edited halved the reported
	// acceptance).
	if math.IsNaN(s.LogLambda) || math.Abs(s.LogLambda) > logLambdaMax {
		return fmt.Errorf("log_lambda %v outside [−%d, %d], where the adaptation keeps it", s.LogLambda, logLambdaMax, logLambdaMax)
	}
	keptSteps := max(0, s.Step-s.Config.BurnIn)
	if s.ProposedKept < 0 || s.ProposedKept > keptSteps {
		return fmt.Errorf("proposed_kept %d outside [0, %d] (steps after burn-in)", s.ProposedKept, keptSteps)
	}
	for k := range c {
		if s.AcceptKept[k] < 0 || s.AcceptKept[k] > s.ProposedKept {
			return fmt.Errorf("accept_kept[%d] = %d outside [0, %d] (proposals after burn-in)", k, s.AcceptKept[k], s.ProposedKept)
		}
		if s.AcceptBurn[k] < 0 || s.AcceptBurn[k] > min(s.Step, s.Config.BurnIn) {
			return fmt.Errorf("accept_burn[%d] = %d outside [0, %d] (burn-in steps)", k, s.AcceptBurn[k], min(s.Step, s.Config.BurnIn))
		}
	}
	started := true
	for _, ok := range s.Started {
		started = started && ok
	}
	if started && len(s.Chol) != d*d {
		return fmt.Errorf("chol has %d entries, want %d", len(s.Chol), d*d)
	}
	switch s.Pending {
	case pendNone:
	case pendDraw:
		for _, k := range s.PendingChains {
			if k < 0 || k >= c {
				return fmt.Errorf("pending chain %d out of range", k)
			}
		}
	case pendProposals:
		if len(s.Proposals) != c {
			return fmt.Errorf("proposals has %d entries, want %d", len(s.Proposals), c)
		}
		for k, y := range s.Proposals {
			if len(y) != d {
				return fmt.Errorf("proposals[%d] has %d entries, want %d", k, len(y), d)
			}
		}
	default:
		return fmt.Errorf("unknown pending kind %d", s.Pending)
	}
	return nil
}

// packSamples packs per chain the draws (d values of θ, log prior, log
// likelihood each) as little-endian: the chain's count (uint64), then its
// rows of d+2 float64.
func packSamples(chains [][]abi.Sample, d int) []byte {
	n := 0
	for _, c := range chains {
		n += 8 + 8*(d+2)*len(c)
	}
	b := make([]byte, 0, n)
	for _, c := range chains {
		b = binary.LittleEndian.AppendUint64(b, uint64(len(c)))
		for _, x := range c {
			for _, v := range x.Theta {
				b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
			}
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x.LogPrior))
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x.LogLik))
		}
	}
	return b
}

// unpackSamples reverses packSamples for the given chains and d, refusing
// a length that does not match.
func unpackSamples(b []byte, chains, d int) ([][]abi.Sample, error) {
	out := make([][]abi.Sample, chains)
	row := 8 * (d + 2)
	for c := range out {
		if len(b) < 8 {
			return nil, fmt.Errorf("samples_bin ends before chain %d", c)
		}
		n := binary.LittleEndian.Uint64(b)
		b = b[8:]
		if row == 0 || n > uint64(len(b)/row) {
			return nil, fmt.Errorf("samples_bin: chain %d has %d draws, more than the %d bytes left hold", c, n, len(b))
		}
		out[c] = make([]abi.Sample, n)
		vals := make([]float64, int(n)*d)
		for i := range out[c] {
			th := vals[i*d : (i+1)*d : (i+1)*d]
			for j := range th {
				th[j] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*j:]))
			}
			out[c][i] = abi.Sample{Theta: th,
				LogPrior: math.Float64frombits(binary.LittleEndian.Uint64(b[8*d:])),
				LogLik:   math.Float64frombits(binary.LittleEndian.Uint64(b[8*d+8:]))}
			b = b[row:]
		}
	}
	if len(b) != 0 {
		return nil, fmt.Errorf("samples_bin has %d bytes after the last chain", len(b))
	}
	return out, nil
}
