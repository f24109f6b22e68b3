// Command plot draws Gouveia et al.'s Figs. 2–5 from data/sensitivity.csv
// as SVG files (drawn with host/figures, i.e. gonum/plot): node 5's x displacement,
// x velocity and x acceleration (Figs. 2–4) and spring 1's axial force
// (Fig. 5) for p_sol, p1 and p2 over 3 s.
//
//	go run ./examples/flex-twobar/plot examples/flex-twobar/data/sensitivity.csv examples/flex-twobar/figs
package main

import (
	"bufio"
	"fmt"
	"image/color"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"gonum.org/v1/plot/vg"

	"github.com/kinfer/kinfer/host/figures"
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
	sets := []struct {
		name  string
		color color.Color
	}{{"p_sol", figures.Black}, {"p1", figures.Color(3)}, {"p2", figures.Color(0)}}
	var ss []figures.Series
	for _, s := range sets {
		v, ok := cols[col+"_"+strings.ReplaceAll(s.name, "_", "")]
		if !ok || len(v) != len(t) {
			return fmt.Errorf("no column %s_%s", col, strings.ReplaceAll(s.name, "_", ""))
		}
		ss = append(ss, figures.Series{Name: s.name, X: t, Y: v, Color: s.color, Thin: true})
	}
	if len(t) < 2 {
		return fmt.Errorf("%s: nothing to plot", col)
	}
	p, err := figures.Lines(title, "t [s]", col, false, ss)
	if err != nil {
		return err
	}
	b, err := figures.Single(col, p, 8*vg.Inch, 3*vg.Inch).SVG()
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}
