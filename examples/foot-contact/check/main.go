package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"

	"github.com/kinfer/kinfer/builtin/formats/opensim"
	"github.com/kinfer/kinfer/builtin/models/foot"
)

func main() {
	s, err := opensim.ReadStorageFile(os.Args[1])
	if err != nil {
		panic(err)
	}
	var tr struct{ Theta map[string]float64 `json:"theta"` }
	b, _ := os.ReadFile(os.Args[2])
	json.Unmarshal(b, &tr)
	mi, _ := foot.New([]float64{0.27, 0.10, 0.03})
	K := len(s.Rows)
	x := make([]float64, 0, K*foot.NConds)
	for _, r := range s.Rows {
		for _, c := range foot.Spec.Conditions {
			x = append(x, r[s.Index(c.Name)])
		}
	}
	for _, which := range []string{"default", "truth"} {
		th := make([]float64, foot.NParams)
		for i, p := range foot.Spec.Params {
			th[i] = p.Default
			if v, ok := tr.Theta[p.Name]; ok && which == "truth" {
				th[i] = v
			}
		}
		y := make([]float64, K*foot.NOut)
		st := mi.Eval(th, x, y)
		fmt.Println(which, st)
		for o, c := range foot.Spec.Outputs {
			j := s.Index(c.Name)
			if j < 0 {
				continue
			}
			ss, n, mx := 0.0, 0, 0.0
			for k := 0; k < K; k++ {
				ob := s.Rows[k][j]
				if math.IsNaN(ob) {
					continue
				}
				d := y[k*foot.NOut+o] - ob
				ss += d * d
				n++
				mx = math.Max(mx, math.Abs(d))
			}
			fmt.Printf("  %-10s rms %.4g max %.4g\n", c.Name, math.Sqrt(ss/float64(n)), mx)
		}
	}
}
