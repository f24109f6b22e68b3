// Command heldout measures knee surrogates on a held-out design: the 90 %
// absolute error of each output of each network file on a design folder
// that neither training nor `kinfer train --validation` saw, beside the
// targets of issue 15 (Bartsoen et al. 2023, Table 3: below 2 mm / 2° for
// the kinematics and 3 % for the strains). `kinfer combine --validation`
// only accepts the design the members were validated on; this tool takes
// any design of the same model, so the committed surrogate can be checked
// on fresh samples, and on more of them than the paper's 2 000 to see how
// much of a margin is sampling noise. The errors are `kinfer score`'s
// (train.Score, which also checks that the design is of the network's
// model, inputs and outputs); this tool adds several networks side by
// side and the targets.
//
//	kinfer design examples/knee-surrogate/design.toml --design lhs --seed 4 --n 1000 -o OUT/test1000
//	go run ./examples/knee-surrogate/heldout -design OUT/test1000 examples/knee-surrogate/knee-nn.json
//
// Outputs are recognised by name, as the knee's design writes them: _mm
// and _deg are kinematics (target 2), strain_ are strains as fractions
// (printed in %, target 3 %).
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/kinfer/kinfer/builtin/models/surrogate"
	"github.com/kinfer/kinfer/host/train"
)

func main() {
	design := flag.String("design", "", "a design folder of the knee (kinfer design) that the networks were not trained on")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: heldout -design DIR NETWORK.json...")
		flag.PrintDefaults()
	}
	flag.Parse()
	if *design == "" || flag.NArg() == 0 {
		flag.Usage()
		os.Exit(2)
	}
	log.SetFlags(0)
	d, err := train.ReadDesign(*design)
	if err != nil {
		log.Fatal(err)
	}
	scale, target := make([]float64, len(d.OutNames)), make([]float64, len(d.OutNames))
	for j, name := range d.OutNames {
		switch {
		case strings.HasPrefix(name, "strain_"):
			scale[j], target[j] = 100, 3
		case strings.HasSuffix(name, "_mm"), strings.HasSuffix(name, "_deg"):
			scale[j], target[j] = 1, 2
		default:
			log.Fatalf("heldout: output %s is not a knee kinematic (_mm, _deg) or strain (strain_)", name)
		}
	}
	fmt.Printf("held-out design %s: %d samples\n", *design, d.Data.N)
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(w, "90 % AE\t")
	for _, name := range d.OutNames {
		fmt.Fprintf(w, "%s\t", name)
	}
	fmt.Fprintln(w, "met\t")
	for _, f := range flag.Args() {
		b, err := os.ReadFile(f)
		if err != nil {
			log.Fatal(err)
		}
		sf, err := surrogate.ReadFile(b)
		if err != nil {
			log.Fatalf("%s: %v", f, err)
		}
		m, err := train.Score(sf, d)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Fprintf(w, "%s\t", f)
		met := 0
		for j, x := range m {
			v := x.AE90 * scale[j]
			if v < target[j] {
				met++
			}
			fmt.Fprintf(w, "%.3f\t", v)
		}
		fmt.Fprintf(w, "%d of %d\t\n", met, len(m))
	}
	w.Flush()
}
