// Command sensitivity prints Lin et al. (2010) Eq. 1's sensitivity vector
// of the builtin elastic-foundation knee (builtin/contact/efound) at a
// light preload ("both sides barely touching", Sec. 2.3.1) and at heavier
// ones, at several flexion angles, and names the sensitive directions.
//
//	go run ./examples/tkr-contact/sensitivity [-cell 0.5] [-nonlinear]
package main

import (
	"flag"
	"fmt"
	"math"
	"os"

	"github.com/kinfer/kinfer/builtin/contact/efound"
)

func main() {
	cell := flag.Float64("cell", 0.5, "element size (mm)")
	nonlin := flag.Bool("nonlinear", false, "nonlinear foundation")
	flag.Parse()
	k := efound.DefaultKnee(*cell, *nonlin)
	const deg = math.Pi / 180
	fmt.Println("| flexion (°) | net F_y (N) | ∂Fx/∂x | ∂Fy/∂y | ∂Fz/∂z (N/mm) | ∂Tα/∂α | ∂Tβ/∂β | ∂Tγ/∂γ (N·m/°) | sensitive |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|")
	for _, flex := range []float64{0, 30, 60} {
		for _, fy := range []float64{50, 500, 2600} {
			p, err := k.Preload(efound.Pose{Gamma: flex * deg}, fy)
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			s, err := k.Sensitivity(p, 1e-3, 1e-3*deg)
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			for i := 3; i < 6; i++ {
				s[i] *= deg // N·m/rad → N·m/°
			}
			fmt.Printf("| %g | %g | %.4g | %.4g | %.4g | %.4g | %.4g | %.4g | %s |\n", flex, fy, s[0], s[1], s[2], s[3], s[4], s[5], sensitive(s))
		}
	}
}

// sensitive names, per group (translations, rotations), the directions
// whose |s| is at least 10× the largest of the others in that group.
func sensitive(s [6]float64) string {
	out := ""
	for g := 0; g < 2; g++ {
		for i := 3 * g; i < 3*g+3; i++ {
			others := 0.0
			for j := 3 * g; j < 3*g+3; j++ {
				if j != i {
					others = math.Max(others, math.Abs(s[j]))
				}
			}
			if math.Abs(s[i]) >= 10*others {
				if out != "" {
					out += ", "
				}
				out += efound.PoseNames[i]
			}
		}
	}
	return out
}
