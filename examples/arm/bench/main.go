// Command bench writes, as JSON, everything the PyTorch twin of the
// builtin arm (torch_arm.py, next to this file) needs to compute the same
// function: the skeleton, the muscles and their paths, the soft joint
// limits, the damping and the ground-truth θ; and, as a check of the twin,
// kinfer's own loss and gradient on the data at one θ: L_FD (Diff-MSM
// Eq. 4, the nmse likelihood, pooled) and ∂L_FD/∂θ over all 54 parameters
// (the arm's VJP chained with nmse's ∂logL/∂y).
//
//	go run ./examples/arm/bench [-data examples/arm/train.csv] [-rows 10000] > arm.json
//
// run.sh in this directory uses it for the side-by-side timing of an Adam
// iteration against PyTorch (docs/PERFORMANCE.md, "Adam on the arm").
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/builtin/likelihood/nmse"
	"github.com/kinfer/kinfer/builtin/models/arm"
	"github.com/kinfer/kinfer/builtin/muscle"
	rb "github.com/kinfer/kinfer/builtin/rigidbody"
	"github.com/kinfer/kinfer/host/dataset"
)

type body struct {
	Name   string     `json:"name"`
	Parent int        `json:"parent"`
	Axis   [3]float64 `json:"axis"`
	Pos    [3]float64 `json:"pos"` // joint placement: a translation (rotation identity, checked)
}

type muscleJSON struct {
	Name   string  `json:"name"`
	LR0    float64 `json:"lr0"`
	Slack  float64 `json:"slack"` // tendon slack length l_s, fixed when L0 is identified
	LMin   float64 `json:"lmin"`
	LMax   float64 `json:"lmax"`
	FPMax  float64 `json:"fpmax"`
	FVMax  float64 `json:"fvmax"`
	Offset float64 `json:"path_offset"`
	Terms  []term  `json:"path_terms"`
}

type term struct {
	Joint int     `json:"joint"`
	C0    float64 `json:"c0"`
	C1    float64 `json:"c1"`
	C2    float64 `json:"c2"`
}

type out struct {
	Doc            string         `json:"doc"`
	Params         []string       `json:"params"`
	Truth          []float64      `json:"theta_truth"`
	Damping        float64        `json:"damping"`
	Gravity        [3]float64     `json:"gravity"`
	Bodies         []body         `json:"bodies"`
	FirstBone      int            `json:"first_bone"` // body index of the humerus
	Muscles        []muscleJSON   `json:"muscles"`
	Range          [][2]float64   `json:"range"`
	LimitStiffness []float64      `json:"limit_stiffness"`
	LimitDamping   []float64      `json:"limit_damping"`
	LimitMargin    float64        `json:"limit_margin"`
	Conditions     []string       `json:"conditions"`
	Outputs        []string       `json:"outputs"`
	Check          map[string]any `json:"check"`
}

// checkTheta is the θ of the check: the truth with every component moved
// by 10 % (alternately up and down), inside the model's bounds.
func checkTheta() []float64 {
	th := arm.GroundTruth()
	for i := range th {
		f := 1.1
		if i%2 == 1 {
			f = 0.9
		}
		if th[i] != 0 {
			th[i] *= f
		} else {
			th[i] = 1e-5 // products of inertia: 0 at the truth
		}
	}
	return th
}

func main() {
	data := flag.String("data", "examples/arm/train.csv", "data file (the arm's conditions and qdd columns)")
	rows := flag.Int("rows", 10000, "rows of the data file to use (the first ones)")
	flag.Parse()
	if err := run(os.Stdout, *data, *rows); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run(w io.Writer, data string, rows int) error { return runAt(w, data, rows, checkTheta()) }

// runAt is run with the check at θ = th.
func runAt(w io.Writer, data string, rows int, th []float64) error {
	o := out{
		Doc:       "builtin arm (github.com/kinfer/kinfer/builtin/models/arm) for torch_arm.py; check: kinfer's L_FD and dL_FD/dtheta at check.theta on the first check.rows rows of check.data",
		Truth:     arm.GroundTruth(),
		Damping:   arm.DefaultDamping,
		Gravity:   arm.Gravity,
		FirstBone: 2,
		Range:     arm.Range[:],
	}
	for _, p := range arm.Spec.Params {
		o.Params = append(o.Params, p.Name)
	}
	for _, c := range arm.Spec.Conditions {
		o.Conditions = append(o.Conditions, c.Name)
	}
	for _, c := range arm.Spec.Outputs {
		o.Outputs = append(o.Outputs, c.Name)
	}
	sk := arm.Skeleton()
	for _, b := range sk.Bodies {
		if b.XTree.E != rb.Identity3 {
			return fmt.Errorf("body %s: joint placement with a rotation, which torch_arm.py does not model", b.Name)
		}
		o.Bodies = append(o.Bodies, body{Name: b.Name, Parent: b.Parent, Axis: b.Axis, Pos: b.XTree.R})
	}
	for i, m := range muscle.MyoArm() {
		mj := muscleJSON{Name: m.Name, LR0: m.LR0, Slack: m.SlackLength(), LMin: m.LMin, LMax: m.LMax, FPMax: m.FPMax, FVMax: m.FVMax,
			Offset: arm.Paths[i].Offset}
		for _, t := range arm.Paths[i].Terms {
			mj.Terms = append(mj.Terms, term{Joint: t.Joint, C0: t.C0, C1: t.C1, C2: t.C2})
		}
		o.Muscles = append(o.Muscles, mj)
	}
	o.LimitStiffness, o.LimitDamping, o.LimitMargin = arm.LimitStiffness[:], arm.LimitDamping[:], arm.LimitMargin

	tab, err := dataset.Read(data)
	if err != nil {
		return err
	}
	if rows > len(tab.Rows) {
		return fmt.Errorf("%s has %d rows, fewer than -rows %d", data, len(tab.Rows), rows)
	}
	x, err := tab.Matrix(o.Conditions)
	if err != nil {
		return err
	}
	obs, err := tab.Matrix(o.Outputs)
	if err != nil {
		return err
	}
	x, obs = x[:rows*arm.NConditions], obs[:rows*arm.NOutputs]
	y, gy, g := make([]float64, len(obs)), make([]float64, len(obs)), make([]float64, arm.NParams)
	m := arm.NewModel(arm.DefaultDamping)
	if st := m.Eval(th, x, y); st != abi.OK {
		return fmt.Errorf("eval: %v", st)
	}
	l := nmse.Likelihood{Normalise: nmse.Pooled}
	logL, st := l.LogLikelihoodGrad(arm.NOutputs, y, obs, nil, gy)
	if st != abi.OK {
		return fmt.Errorf("nmse: %v", st)
	}
	if st := m.VJP(th, x, gy, y, g); st != abi.OK {
		return fmt.Errorf("vjp: %v", st)
	}
	for i := range g {
		g[i] = -g[i] // ∂L_FD/∂θ = −∂logL/∂θ
	}
	o.Check = map[string]any{"data": data, "rows": rows, "theta": th, "loss": -logL, "grad": g}
	for _, v := range append(append([]float64{-logL}, g...), th...) {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("non-finite check value")
		}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", " ")
	return enc.Encode(o)
}
