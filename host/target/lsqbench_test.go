package target_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/builtin"
	"github.com/kinfer/kinfer/host/study"
	"github.com/kinfer/kinfer/host/target"
)

// A synthetic model of Jackson et al. 2016's calibration size (2 × 38
// springs' stiffness and damping, the kinematic spline coefficients: about
// 150 parameters; 10 000 residuals): y(t) = Σ_{j<75} a_j·exp(−((t −
// c_j)/w)²) over the bumps with |t − c_j| < 6w (the others are below
// e⁻³⁶), 75 amplitudes and 75 centres, at 10 000 times t: about 130 000
// exponentials per evaluation (≈ 2–3 ms), a model cheap enough that the
// host's own work (batching, residuals, assembling the Jacobian) shows.
const (
	synthBumps = 75
	synthRows  = 10000
	synthWidth = 0.02
)

type synthModel struct{}

var synthSpec = func() abi.Spec {
	s := abi.Spec{Kind: abi.KindModel, Name: "synth-jackson", Conditions: []abi.Column{{Name: "t"}}, Outputs: []abi.Column{{Name: "y"}}}
	for j := 0; j < synthBumps; j++ {
		s.Params = append(s.Params, abi.Param{Name: fmt.Sprintf("a%02d", j), Lower: 0, Upper: 10, Default: 1})
	}
	for j := 0; j < synthBumps; j++ {
		c := (float64(j) + 0.5) / synthBumps
		s.Params = append(s.Params, abi.Param{Name: fmt.Sprintf("c%02d", j), Lower: c - 0.01, Upper: c + 0.01, Default: c})
	}
	return s
}()

func (synthModel) Spec() abi.Spec { return synthSpec }
func (synthModel) Eval(th, x, y []float64) abi.Status {
	for k, t := range x {
		s := 0.0
		for j := 0; j < synthBumps; j++ {
			u := (t - th[synthBumps+j]) / synthWidth
			if u > -6 && u < 6 {
				s += th[j] * math.Exp(-u*u)
			}
		}
		y[k] = s
	}
	return abi.OK
}

// synthStudy writes and loads the study: 10 000 rows, Gaussian σ = 0.05,
// uniform priors on the model's bounds.
func synthStudy(b *testing.B, jacobian string) *study.Study {
	b.Helper()
	builtin.Models["synth-jackson"] = builtin.Entry[abi.Model]{Spec: synthSpec, New: func([]float64) (abi.Model, error) { return synthModel{}, nil }}
	b.Cleanup(func() { delete(builtin.Models, "synth-jackson") })
	dir := b.TempDir()
	var csv strings.Builder
	csv.WriteString("t,y\n")
	th := make([]float64, len(synthSpec.Params))
	for j, p := range synthSpec.Params {
		th[j] = p.Default
	}
	y := make([]float64, 1)
	for k := 0; k < synthRows; k++ {
		t := float64(k) / synthRows
		synthModel{}.Eval(th, []float64{t}, y)
		fmt.Fprintf(&csv, "%g,%.6f\n", t, y[0]+0.05*math.Sin(float64(7*k)))
	}
	var toml strings.Builder
	toml.WriteString("name = \"synth\"\njacobian = \"" + jacobian + "\"\n[model]\nuse = \"synth-jackson\"\n[[data]]\nname = \"d\"\nfile = \"d.csv\"\n" +
		"[[likelihood]]\nuse = \"gaussian\"\nsigma = 0.05\n[method]\nuse = \"metropolis\"\n[prior]\n")
	for _, p := range synthSpec.Params {
		fmt.Fprintf(&toml, "%s = { uniform = [%.17g, %.17g] }\n", p.Name, p.Lower, p.Upper)
	}
	for name, text := range map[string]string{"d.csv": csv.String(), "s.toml": toml.String()} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	s, err := study.Load(context.Background(), filepath.Join(dir, "s.toml"), study.Options{Workers: 2})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

// BenchmarkJacobianJacksonSize: one point's residuals and their 10 000 ×
// 150 Jacobian by forward differences (150 extra evaluations, one batch on
// the workers) and by central differences (300), on 1 and 2 workers; the
// residuals alone (one evaluation through the host) and the model's Eval
// alone.
//
//	go test ./host/target -run XXX -bench JacobianJacksonSize -benchtime 5x
func BenchmarkJacobianJacksonSize(b *testing.B) {
	b.Run("model-eval", func(b *testing.B) {
		th := make([]float64, len(synthSpec.Params))
		for j, p := range synthSpec.Params {
			th[j] = p.Default
		}
		x, y := make([]float64, synthRows), make([]float64, synthRows)
		for k := range x {
			x[k] = float64(k) / synthRows
		}
		for i := 0; i < b.N; i++ {
			synthModel{}.Eval(th, x, y)
		}
	})
	for _, c := range []struct {
		mode string
		want abi.Want
	}{{"forward", abi.WantResiduals}, {"forward", abi.WantJacobian}, {"central", abi.WantJacobian}} {
		s := synthStudy(b, c.mode)
		x := make([]float64, len(s.Free))
		for j, p := range s.Free {
			x[j] = p.Default + 0.1*(p.Upper-p.Lower)*math.Sin(float64(j))
			x[j] = math.Min(math.Max(x[j], p.Lower), p.Upper)
		}
		what := "residuals"
		if c.want == abi.WantJacobian {
			what = c.mode + "-jacobian"
		}
		for _, w := range []int{1, 2} {
			b.Run(fmt.Sprintf("%s/workers=%d", what, w), func(b *testing.B) {
				tg := target.New(s, w)
				for i := 0; i < b.N; i++ {
					res, err := tg.Evaluate(context.Background(), [][]float64{x}, c.want)
					if err != nil || res[0].Status != abi.OK || len(res[0].Residuals) != synthRows {
						b.Fatalf("%v %v", err, res[0].Status)
					}
					if c.want == abi.WantJacobian && len(res[0].Jacobian) != synthRows*2*synthBumps {
						b.Fatalf("no Jacobian")
					}
				}
			})
		}
	}
}
