package main

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"

	"github.com/kinfer/kinfer/builtin/models/arm"
)

// The constants describe the builtin arm (5 bodies, 8 muscles with 19
// path terms, 54 parameters, the check θ inside the model's bounds), and
// the check's gradient is that of the loss: a central difference of the
// written loss along the gradient direction matches |g|² to 1e-6.
func TestConstants(t *testing.T) {
	var b bytes.Buffer
	if err := run(&b, "../train.csv", 200); err != nil {
		t.Fatal(err)
	}
	var o struct {
		Params  []string `json:"params"`
		Bodies  []body   `json:"bodies"`
		Muscles []muscleJSON
		Check   struct {
			Rows  int       `json:"rows"`
			Theta []float64 `json:"theta"`
			Loss  float64   `json:"loss"`
			Grad  []float64 `json:"grad"`
		} `json:"check"`
	}
	if err := json.Unmarshal(b.Bytes(), &o); err != nil {
		t.Fatal(err)
	}
	terms := 0
	for _, m := range o.Muscles {
		terms += len(m.Terms)
	}
	if len(o.Params) != arm.NParams || len(o.Bodies) != 5 || len(o.Muscles) != arm.NMuscles || terms != 19 ||
		o.Check.Rows != 200 || len(o.Check.Theta) != arm.NParams || len(o.Check.Grad) != arm.NParams {
		t.Fatalf("%d params, %d bodies, %d muscles, %d terms, %d rows, %d θ, %d gradient",
			len(o.Params), len(o.Bodies), len(o.Muscles), terms, o.Check.Rows, len(o.Check.Theta), len(o.Check.Grad))
	}
	for i, p := range arm.Spec.Params {
		if th := o.Check.Theta[i]; th < p.Lower || th > p.Upper {
			t.Errorf("check θ %s = %g outside [%g, %g]", p.Name, th, p.Lower, p.Upper)
		}
	}
	// Directional derivative of the loss along g, in range-scaled steps.
	loss := func(s float64) float64 {
		th := append([]float64(nil), o.Check.Theta...)
		for i, p := range arm.Spec.Params {
			w := p.Upper - p.Lower
			th[i] += s * o.Check.Grad[i] * w * w
		}
		var c bytes.Buffer
		if err := runAt(&c, "../train.csv", 200, th); err != nil {
			t.Fatal(err)
		}
		var r struct {
			Check struct{ Loss float64 } `json:"check"`
		}
		json.Unmarshal(c.Bytes(), &r)
		return r.Check.Loss
	}
	want := 0.0
	for i, p := range arm.Spec.Params {
		w := p.Upper - p.Lower
		want += o.Check.Grad[i] * o.Check.Grad[i] * w * w
	}
	h := 1e-4 / math.Sqrt(want)
	fd := (loss(h) - loss(-h)) / (2 * h)
	if math.Abs(fd-want) > 1e-6*want {
		t.Errorf("directional derivative %.12g, |g|² %.12g", fd, want)
	}
}
