// Command plot draws Gouveia et al.'s Figs. 2–5 from data/sensitivity.csv
// as SVG files (no plotting library needed): node 5's x displacement,
// x velocity and x acceleration (Figs. 2–4) and spring 1's axial force
// (Fig. 5) for p_sol, p1 and p2 over 3 s.
//
//	go run ./examples/flex-twobar/plot examples/flex-twobar/data/sensitivity.csv examples/flex-twobar/figs
package main

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

func main() {
	if len(os.Args) != 3 || os.Args[1] == "-h" || os.Args[1] == "--help" {
		fmt.Println("usage: go run ./examples/flex-twobar/plot SENSITIVITY.csv OUTDIR")
		if len(os.Args) != 3 {
			os.Exit(2)
		}
		return
	}
	if err := run(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "plot:", err)
		os.Exit(1)
	}
}

func run(in, out string) error {
	fh, err := os.Open(in)
	if err != nil {
		return err
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var header []string
	cols := map[string][]float64{}
	line := 0
	for sc.Scan() {
		line++
		l := sc.Text()
		if strings.HasPrefix(l, "#") || l == "" {
			continue
		}
		f := strings.Split(l, ",")
		if header == nil {
			header = f
			continue
		}
		if len(f) != len(header) {
			return fmt.Errorf("%s:%d: %d fields, header has %d", in, line, len(f), len(header))
		}
		for i, h := range header {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				return fmt.Errorf("%s:%d: column %s: %v", in, line, h, err)
			}
			cols[h] = append(cols[h], v)
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	figs := []struct{ file, col, title string }{
		{"fig2-displacement.svg", "x5", "Fig. 2: node 5 x displacement (m)"},
		{"fig3-velocity.svg", "vx5", "Fig. 3: node 5 x velocity (m/s)"},
		{"fig4-acceleration.svg", "ax5", "Fig. 4: node 5 x acceleration (m/s²)"},
		{"fig5-force.svg", "N1", "Fig. 5: spring element 1 axial force (N)"},
	}
	for _, fg := range figs {
		if err := svg(filepath.Join(out, fg.file), fg.title, cols["t"], cols, fg.col); err != nil {
			return err
		}
	}
	return nil
}

func svg(path, title string, t []float64, cols map[string][]float64, col string) error {
	const W, H, L, R, T, B = 800.0, 300.0, 60.0, 20.0, 30.0, 30.0
	sets := []struct{ name, color string }{{"psol", "black"}, {"p1", "#d62728"}, {"p2", "#1f77b4"}}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range sets {
		v, ok := cols[col+"_"+s.name]
		if !ok || len(v) != len(t) {
			return fmt.Errorf("no column %s_%s", col, s.name)
		}
		for _, x := range v {
			lo, hi = math.Min(lo, x), math.Max(hi, x)
		}
	}
	if len(t) < 2 || !(hi > lo) {
		return fmt.Errorf("%s: nothing to plot", col)
	}
	X := func(x float64) float64 { return L + (x-t[0])/(t[len(t)-1]-t[0])*(W-L-R) }
	Y := func(y float64) float64 { return T + (hi-y)/(hi-lo)*(H-T-B) }
	var b strings.Builder
	fmt.Fprintf(&b, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%g\" height=\"%g\" font-family=\"sans-serif\" font-size=\"12\">\n", W, H)
	fmt.Fprintf(&b, "<text x=\"%g\" y=\"18\">%s; black p_sol, red p1, blue p2; t from %g to %g s</text>\n", L, title, t[0], t[len(t)-1])
	fmt.Fprintf(&b, "<rect x=\"%g\" y=\"%g\" width=\"%g\" height=\"%g\" fill=\"none\" stroke=\"#888\"/>\n", L, T, W-L-R, H-T-B)
	fmt.Fprintf(&b, "<text x=\"4\" y=\"%g\">%.3g</text><text x=\"4\" y=\"%g\">%.3g</text>\n", T+10, hi, H-B, lo)
	for _, s := range sets {
		v := cols[col+"_"+s.name]
		b.WriteString("<polyline fill=\"none\" stroke=\"" + s.color + "\" stroke-width=\"1\" points=\"")
		for i := range t {
			fmt.Fprintf(&b, "%.1f,%.1f ", X(t[i]), Y(v[i]))
		}
		b.WriteString("\"/>\n")
	}
	b.WriteString("</svg>\n")
	return os.WriteFile(path, []byte(b.String()), 0o644)
}
