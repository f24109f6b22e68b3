// Command gen writes the data of the two-bar example (Gouveia, Lemosse,
// Pagnacco & Souza de Cursi, "Temporal identification in a flexible
// multibody system: application to biomechanics", Sec. 6–7, Fig. 1–5,
// Table 1; the system is builtin/flexmb/twobar):
//
//   - simulated.csv: the release from π/6 with p_sol integrated for 3 s by
//     HHT-α (α = −0.05, h = 1 ms), sampled every 10 ms: t, q (x1 … th5),
//     q̇ (vx1 … vth5), q̈ (ax1 … ath5) — the "simulated set";
//
//   - measured.csv: the same q, with q̇ and q̈ from central differences of q
//     at 10 ms — the "measured set" (interior samples);
//
//   - mixed.csv: q and q̈ simulated, q̇ measured (Table 1, rows 2 and 5);
//
//   - direct-SET-tN.csv, indirect-SET-tN.csv: the row at t₁ = 0.69 s or
//     t₂ = 2.83 s of each set, as the direct model (kinematics + zero
//     residual columns r_x2 … r_th5) and the indirect model (t + state)
//     read them;
//
//   - sensitivity.csv (Figs. 2–5): node 5's x, y, q̇, q̈ and spring 1's
//     force and moment for p_sol, p1 and p2 over 3 s.
//
//     go run ./examples/flex-twobar/gen examples/flex-twobar/data
package main

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/kinfer/kinfer/builtin/flexmb/twobar"
	"github.com/kinfer/kinfer/builtin/models/twobardirect"
)

func main() {
	dir := "."
	if len(os.Args) > 1 {
		if os.Args[1] == "-h" || os.Args[1] == "--help" {
			fmt.Println("usage: go run ./examples/flex-twobar/gen [DIR]   (writes the two-bar datasets into DIR)")
			return
		}
		dir = os.Args[1]
	}
	if err := write(dir); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

// Files are the names write produces.
var Files = func() []string {
	out := []string{"simulated.csv", "measured.csv", "mixed.csv", "sensitivity.csv", "indirect-simulated-upto-t0.csv", "indirect-simulated-upto-t1.csv", "indirect-simulated-upto-t2.csv"}
	for _, kind := range []string{"direct", "indirect"} {
		for _, set := range []string{"simulated", "mixed", "measured"} {
			for _, tn := range []string{"t1", "t2"} {
				out = append(out, kind+"-"+set+"-"+tn+".csv")
			}
		}
	}
	return out
}()

func f(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

func writeCSV(path, comment string, header []string, rows [][]float64) error {
	fh, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(fh)
	for _, l := range strings.Split(comment, "\n") {
		fmt.Fprintf(w, "# %s\n", l)
	}
	fmt.Fprintln(w, strings.Join(header, ","))
	for _, r := range rows {
		s := make([]string, len(r))
		for i, v := range r {
			s[i] = f(v)
		}
		fmt.Fprintln(w, strings.Join(s, ","))
	}
	if err := w.Flush(); err != nil {
		fh.Close()
		return err
	}
	return fh.Close()
}

func kinHeader() []string {
	h := []string{}
	for _, pre := range []string{"", "v", "a"} {
		h = append(h, twobar.CoordNames(pre)...)
	}
	return h
}

func kinRow(s twobar.State) []float64 {
	return append(append(append([]float64(nil), s.Q...), s.V...), s.A...)
}

// T0 is the short horizon of the sweep's continuation in time (row 9).
const T0 = 0.2

const source = "Gouveia et al., two flexible bars (Fig. 1), released from pi/6, HHT alpha=-0.05, h=1 ms, p_sol=[700 0.5 400 0.5]; written by examples/flex-twobar/gen"

func write(dir string) error {
	sim, err := twobar.Simulate(twobar.PSol, twobar.DefaultOptions(), twobar.Tend, twobar.SampleEvery)
	if err != nil {
		return err
	}
	meas := twobar.Measured(sim)
	mixed := make([]twobar.State, len(meas))
	for i, m := range meas {
		s := sim[i+1]
		mixed[i] = twobar.State{T: s.T, Q: s.Q, V: m.V, A: s.A}
	}
	sets := map[string][]twobar.State{"simulated": sim, "measured": meas, "mixed": mixed}
	descr := map[string]string{
		"simulated": "simulated set: q, qdot, qddot from the integrator",
		"measured":  "measured set: q from the integrator, qdot and qddot by central differences of q at 10 ms",
		"mixed":     "q and qddot from the integrator, qdot by central differences of q at 10 ms",
	}
	header := append([]string{"t"}, kinHeader()...)
	for _, name := range []string{"simulated", "measured", "mixed"} {
		var rows [][]float64
		for _, s := range sets[name] {
			rows = append(rows, append([]float64{s.T}, kinRow(s)...))
		}
		if err := writeCSV(filepath.Join(dir, name+".csv"), descr[name]+"\n"+source, header, rows); err != nil {
			return err
		}
	}
	at := func(set []twobar.State, t float64) (twobar.State, error) {
		for _, s := range set {
			if math.Abs(s.T-t) < 1e-9 {
				return s, nil
			}
		}
		return twobar.State{}, fmt.Errorf("no sample at t = %g", t)
	}
	rnames := twobardirect.OutputNames()
	dh := append(kinHeader(), rnames...)
	for _, name := range []string{"simulated", "mixed", "measured"} {
		for tn, tt := range map[string]float64{"t1": twobar.T1, "t2": twobar.T2} {
			s, err := at(sets[name], tt)
			if err != nil {
				return err
			}
			row := append(kinRow(s), make([]float64, len(rnames))...)
			c := fmt.Sprintf("%s at t = %g s; r_* = 0: the equations of motion hold (direct identification, Eq. 11)\n%s", descr[name], tt, source)
			if err := writeCSV(filepath.Join(dir, "direct-"+name+"-"+tn+".csv"), c, dh, [][]float64{row}); err != nil {
				return err
			}
			c = fmt.Sprintf("%s at t = %g s (indirect identification, Eq. 15/16)\n%s", descr[name], tt, source)
			if err := writeCSV(filepath.Join(dir, "indirect-"+name+"-"+tn+".csv"), c, header, [][]float64{append([]float64{tt}, kinRow(s)...)}); err != nil {
				return err
			}
		}
	}
	// Eq. 15 on every sample up to t (x2, y4, x5, y5 at 10 ms): the
	// many-reference-times identification the paper's conclusion proposes.
	ph := []string{"t", "x2", "y4", "x5", "y5"}
	for tn, tt := range map[string]float64{"t0": T0, "t1": twobar.T1, "t2": twobar.T2} {
		var rows [][]float64
		for _, s := range sim[1:] {
			if s.T > tt+1e-9 {
				break
			}
			rows = append(rows, []float64{s.T, s.Q[3], s.Q[10], s.Q[12], s.Q[13]})
		}
		c := fmt.Sprintf("simulated set, positions x2, y4, x5, y5 at every sample in (0, %g] s (indirect identification, Eq. 15 at many times)\n%s", tt, source)
		if err := writeCSV(filepath.Join(dir, "indirect-simulated-upto-"+tn+".csv"), c, ph, rows); err != nil {
			return err
		}
	}
	return sensitivity(dir, sim)
}

// sensitivity writes Figs. 2–5: node 5's displacement, velocity and
// acceleration and spring 1's force and moment for p_sol, p1, p2.
func sensitivity(dir string, sim []twobar.State) error {
	sets := []struct {
		name string
		p    [twobar.NParam]float64
	}{{"psol", twobar.PSol}, {"p1", twobar.P1}, {"p2", twobar.P2}}
	header := []string{"t"}
	var runs [][]twobar.State
	var syss = make([]func(q []float64) (float64, float64), 0)
	for i, s := range sets {
		for _, c := range []string{"x5", "y5", "vx5", "vy5", "ax5", "ay5", "N1", "M1"} {
			header = append(header, c+"_"+s.name)
		}
		r := sim
		if i > 0 {
			var err error
			if r, err = twobar.Simulate(s.p, twobar.DefaultOptions(), twobar.Tend, twobar.SampleEvery); err != nil {
				return err
			}
		}
		runs = append(runs, r)
		sys, err := twobar.System(s.p)
		if err != nil {
			return err
		}
		syss = append(syss, func(q []float64) (float64, float64) { return sys.SpringForces(0, q) })
	}
	var rows [][]float64
	for k := range sim {
		row := []float64{sim[k].T}
		for i, r := range runs {
			s := r[k]
			N, M := syss[i](s.Q)
			row = append(row, s.Q[12], s.Q[13], s.V[12], s.V[13], s.A[12], s.A[13], N, M)
		}
		rows = append(rows, row)
	}
	c := "Figs. 2-5: node 5 displacement (m), velocity (m/s), acceleration (m/s^2) and spring element 1 axial force N1 (N) and moment M1 (N m) for p_sol, p1=[663 0.49 379 0.49], p2=[757 0.50 465 0.52]\n" + source
	return writeCSV(filepath.Join(dir, "sensitivity.csv"), c, header, rows)
}
