// Command refinebox writes the design study of a refinement: the design
// study of a surrogate with each uniform prior narrowed to where a first
// posterior lies (examples/knee-surrogate, issue 15). Sequential design
// for Bayesian calibration with surrogates samples the expensive model
// again where the posterior found with the first surrogate lives, and
// trains the next surrogate on both design runs (`kinfer train DIR1 DIR2`).
//
//	go run ./examples/knee-surrogate/refinebox -study examples/knee-surrogate/design.toml \
//	    -run OUT/s1-nn -o OUT/design-refine.toml
//	kinfer design OUT/design-refine.toml --design sobol --n 4000 -o OUT/refine
//
// For every parameter with a uniform prior [a, b] in the study's [prior]
// table and a column in RUN/samples.csv, the new prior is the posterior's
// [q_lo, q_hi] quantile range (defaults 0.5 % and 99.5 %) widened by
// -widen of its width on each side and cut to [a, b]. Other lines are kept
// as they are; data files named by a relative path are made absolute, so
// the new study may be written anywhere. It prints the new box's volume as
// a fraction of the old one's.
package main

import (
	"encoding/csv"
	"flag"
	"fmt"
	"log"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/kinfer/kinfer/builtin/stats"
)

var (
	uniformLine = regexp.MustCompile(`^(\s*)([A-Za-z_][A-Za-z0-9_]*)(\s*=\s*)\{\s*uniform\s*=\s*\[[^\]]*\]\s*\}(.*)$`)
	fileLine    = regexp.MustCompile(`^(\s*file\s*=\s*)"([^"]*)"(.*)$`)
	nameLine    = regexp.MustCompile(`^(\s*name\s*=\s*)"([^"]*)"(.*)$`)
)

func main() {
	study := flag.String("study", "", "the design study TOML of the first surrogate")
	runDir := flag.String("run", "", "a run whose samples.csv is the posterior to refine around")
	qlo := flag.Float64("lo", 0.005, "lower posterior quantile")
	qhi := flag.Float64("hi", 0.995, "upper posterior quantile")
	widen := flag.Float64("widen", 0.1, "widen each range by this share of its width on each side")
	out := flag.String("o", "", "the refinement's design study TOML to write")
	flag.Parse()
	if *study == "" || *runDir == "" || *out == "" || !(0 <= *qlo && *qlo < *qhi && *qhi <= 1) || *widen < 0 {
		flag.Usage()
		os.Exit(2)
	}
	var st struct {
		Prior map[string]struct{ Uniform []float64 }
	}
	if _, err := toml.DecodeFile(*study, &st); err != nil {
		log.Fatal(err)
	}
	cols, err := readColumns(filepath.Join(*runDir, "samples.csv"))
	if err != nil {
		log.Fatal(err)
	}
	src, err := os.ReadFile(*study)
	if err != nil {
		log.Fatal(err)
	}
	dir, _ := filepath.Abs(filepath.Dir(*study))
	var b strings.Builder
	inPrior, inTable, vol, narrowed := false, false, 1.0, 0
	for _, ln := range strings.Split(strings.TrimRight(string(src), "\n"), "\n") {
		if t := strings.TrimSpace(ln); strings.HasPrefix(t, "[") {
			inPrior, inTable = strings.HasPrefix(t, "[prior]"), true
		}
		if m := nameLine.FindStringSubmatch(ln); m != nil && !inTable { // the study's name
			ln = m[1] + strconv.Quote(m[2]+"-refine") + m[3]
		}
		if m := fileLine.FindStringSubmatch(ln); m != nil && !filepath.IsAbs(m[2]) {
			ln = m[1] + strconv.Quote(filepath.Join(dir, m[2])) + m[3]
		}
		if m := uniformLine.FindStringSubmatch(ln); m != nil && inPrior {
			p, ok := st.Prior[m[2]]
			x, have := cols[m[2]]
			if ok && len(p.Uniform) == 2 && have {
				a, bb := p.Uniform[0], p.Uniform[1]
				lo, hi := stats.Quantile(x, *qlo), stats.Quantile(x, *qhi)
				w := hi - lo
				lo, hi = math.Max(a, lo-*widen*w), math.Min(bb, hi+*widen*w)
				if !(lo < hi) { // a posterior on one value: keep a sliver
					lo, hi = math.Max(a, lo-1e-6*(bb-a)), math.Min(bb, hi+1e-6*(bb-a))
				}
				vol *= (hi - lo) / (bb - a)
				narrowed++
				ln = fmt.Sprintf("%s%s%s{ uniform = [%.6g, %.6g] }   # first design: [%g, %g]", m[1], m[2], m[3], lo, hi, a, bb)
			}
		}
		b.WriteString(ln + "\n")
	}
	if narrowed == 0 {
		log.Fatalf("no uniform prior of %s has a column in %s/samples.csv", *study, *runDir)
	}
	if err := os.WriteFile(*out, []byte(b.String()), 0o644); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s: %d priors narrowed to the posterior's [%g, %g] quantiles widened by %g; box volume %.3g of the first design's\n",
		*out, narrowed, *qlo, *qhi, *widen, vol)
}

// readColumns reads samples.csv into one slice per column.
func readColumns(path string) (map[string][]float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	if len(rows) < 2 {
		return nil, fmt.Errorf("%s: no samples", path)
	}
	cols := map[string][]float64{}
	for j, name := range rows[0] {
		for i, r := range rows[1:] {
			v, err := strconv.ParseFloat(r[j], 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
				delete(cols, name)
				break
			}
			if i == 0 {
				cols[name] = make([]float64, 0, len(rows)-1)
			}
			cols[name] = append(cols[name], v)
		}
	}
	return cols, nil
}
