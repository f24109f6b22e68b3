package kneewear

import (
	"fmt"
	"math"
	"sync"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/builtin/contact/efound"
	"github.com/kinfer/kinfer/builtin/wearsim"
)

// ContactNames are the choices of setting "contact".
var ContactNames = []string{"surrogate", "ef"}

// Spec is the self-description of the builtin kneewear model.
var Spec = func() abi.Spec {
	s := abi.Spec{
		Kind:    abi.KindModel,
		Name:    "kneewear",
		Version: "1.0.0",
		Doc:     "knee wear simulator (ISO 14243-1 inputs varied by two weights per curve, Lin 2010 Sec. 2.3.5): CoP-based Archard wear after 5 million cycles with the elastic-foundation contact model or its Kriging surrogates",
		Settings: []abi.Setting{
			{Name: "contact", Default: 0, Choices: ContactNames, Doc: "surrogate: Lin's Kriging surrogates (built once per process); ef: the elastic-foundation model"},
			{Name: "cell_mm", Unit: "mm", Default: 0.5, Doc: "element size of the elastic-foundation mesh"},
			{Name: "samples", Default: 1000, Doc: "Hammersley sample points of the surrogate"},
			{Name: "steps", Default: 250, Doc: "time steps per 1 s cycle"},
			{Name: "warmup", Default: 0.25, Doc: "cycles simulated before the measured one (the start transients decay in ~0.1 s)"},
		},
		Conditions: []abi.Column{{Name: "cycle", Unit: "1", Doc: "ignored (one row per evaluation)"}},
		Outputs: []abi.Column{
			{Name: "wear_total_mm3", Unit: "mm³", Doc: "medial + lateral wear volume after 5 million cycles"},
			{Name: "wear_medial_mm3", Unit: "mm³", Doc: "medial wear volume"},
			{Name: "wear_lateral_mm3", Unit: "mm³", Doc: "lateral wear volume"},
		},
	}
	for _, in := range wearsim.InputNames {
		for c := 1; c <= 2; c++ {
			s.Params = append(s.Params, abi.Param{Name: fmt.Sprintf("%s_w%d", in, c), Unit: "1", Lower: 0, Upper: 1, Default: 0.5,
				Doc: fmt.Sprintf("weight of variation component %d (%s) of the %s curve; 0.5 nominal", c, []string{"amplitude", "timing"}[c-1], in)})
		}
	}
	return s
}()

// Model is the simulator with its contact model choice.
type Model struct {
	EF      bool
	Cell    float64
	Samples int
	Steps   int
	Warmup  float64
}

// New builds the model from its settings (contact, cell_mm, samples, steps).
func New(settings []float64) (abi.Model, error) {
	if len(settings) != 5 {
		return nil, fmt.Errorf("kneewear: want 5 settings (contact, cell_mm, samples, steps, warmup), got %d", len(settings))
	}
	if !(settings[4] > 0 && settings[4] <= 10) {
		return nil, fmt.Errorf("kneewear: warmup must be in (0, 10] cycles, got %g", settings[4])
	}
	if settings[0] != 0 && settings[0] != 1 {
		return nil, fmt.Errorf("kneewear: contact must be surrogate or ef, got index %g", settings[0])
	}
	if !(settings[1] >= 0.2 && settings[1] <= 5) {
		return nil, fmt.Errorf("kneewear: cell_mm must be in [0.2, 5], got %g", settings[1])
	}
	if !(settings[2] >= 20 && settings[2] <= 5000) || settings[2] != math.Trunc(settings[2]) {
		return nil, fmt.Errorf("kneewear: samples must be an integer in [20, 5000], got %g", settings[2])
	}
	if !(settings[3] >= 50 && settings[3] <= 10000) || settings[3] != math.Trunc(settings[3]) {
		return nil, fmt.Errorf("kneewear: steps must be an integer in [50, 10000], got %g", settings[3])
	}
	return &Model{EF: settings[0] == 1, Cell: settings[1], Samples: int(settings[2]), Steps: int(settings[3]), Warmup: settings[4]}, nil
}

// Spec implements abi.Model.
func (*Model) Spec() abi.Spec { return Spec }

type key struct {
	cell    float64
	samples int
}

type built struct {
	once sync.Once
	c    wearsim.Contact
	err  error
}

var (
	mu     sync.Mutex
	shared = map[key]*built{}
	isoIn  wearsim.Inputs
	isoErr error
	isoOne sync.Once
)

// contact returns the process-wide contact model for m's settings, built
// on first use (concurrent callers wait for it).
func (m *Model) contact() (wearsim.Contact, error) {
	k := key{m.Cell, m.Samples}
	if m.EF {
		k.samples = 0
	}
	mu.Lock()
	b := shared[k]
	if b == nil {
		b = &built{}
		shared[k] = b
	}
	mu.Unlock()
	b.once.Do(func() {
		knee := efound.DefaultKnee(m.Cell, false)
		if m.EF {
			b.c, b.err = wearsim.NewEF(knee)
			return
		}
		s, _, err := wearsim.BuildSurrogate(knee, m.Samples, wearsim.WearBox, wearsim.WearMinSide, 2, nil)
		b.c, b.err = s, err
	})
	return b.c, b.err
}

// Eval implements abi.Model: every row gets the same three wear volumes.
func (m *Model) Eval(theta, x, y []float64) abi.Status {
	var w wearsim.Weights
	for i := range w {
		w[i] = [2]float64{theta[2*i], theta[2*i+1]}
		for _, v := range w[i] {
			if !(v >= 0 && v <= 1) {
				return abi.Invalid
			}
		}
	}
	c, err := m.contact()
	if err != nil {
		return abi.Failed
	}
	isoOne.Do(func() { isoIn, isoErr = wearsim.ISO(1) })
	if isoErr != nil {
		return abi.Failed
	}
	in, err := wearsim.Vary(isoIn, wearsim.DefaultFamilies, w)
	if err != nil {
		return abi.Invalid
	}
	r, err := wearsim.Simulate(c, wearsim.DefaultMachine, in, wearsim.Options{Steps: m.Steps, Warmup: m.Warmup})
	if err != nil {
		return abi.Failed
	}
	for i := 0; i < len(x); i++ {
		y[3*i], y[3*i+1], y[3*i+2] = r.Total(), r.WearCoP[0], r.WearCoP[1]
	}
	return abi.OK
}
