// Command gen writes examples/tkr-contact/loads.csv, the synthetic
// "measured" medial and lateral axial loads of study.toml: the tkrcontact
// model at a known truth (E = 400 MPa, a seating offset y0 = −0.010 mm,
// ν = 0.46, h = 5 mm, linear foundation, 0.5 mm cells) at 16 poses, plus
// Gaussian noise of σ = 5 N from a fixed seed (PCG 16, 1).
//
//	go run ./examples/tkr-contact/gen > examples/tkr-contact/loads.csv
package main

import (
	"fmt"
	"math/rand/v2"
	"os"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/builtin/models/tkrcontact"
)

func main() {
	m, err := tkrcontact.New([]float64{0, 0.5})
	if err != nil {
		panic(err)
	}
	theta := []float64{400, 0.46, 5, 0, -0.010, 0, 0, 0, 0}
	rng := rand.New(rand.NewPCG(16, 1))
	fmt.Println("# synthetic loads: tkrcontact at E_MPa = 400, y0_mm = -0.010, noise sd 5 N (examples/tkr-contact/gen)")
	fmt.Println("x_mm,y_mm,z_mm,alpha_deg,beta_deg,gamma_deg,med_Fy_N,lat_Fy_N")
	y := make([]float64, tkrcontact.NumOutputs)
	for i := 0; i < 16; i++ {
		// a gait-like sweep: flexion 0–60°, AP ±1.5 mm, IE ±2°, small VV
		f := float64(i) / 15
		pose := []float64{1.5 * (2*f - 1), -0.01 - 0.04*f*(1-f)*4, 0.2 * (f - 0.5), 0.03 * (0.5 - f), 2 * (2*f - 1) * (1 - f), 60 * f}
		if st := m.Eval(theta, pose, y); st != abi.OK {
			fmt.Fprintln(os.Stderr, "gen: status", st)
			os.Exit(1)
		}
		med := y[1] + 5*rng.NormFloat64()
		lat := y[11] + 5*rng.NormFloat64()
		fmt.Printf("%g,%g,%g,%g,%g,%g,%.3f,%.3f\n", pose[0], pose[1], pose[2], pose[3], pose[4], pose[5], med, lat)
	}
}
