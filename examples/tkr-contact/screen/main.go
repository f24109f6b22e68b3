// Command screen classifies the poses of a `kinfer design` run of the
// tkrcontact model (examples/tkr-contact/design.toml) the way Lin et al.
// (2010, Sec. 2.2.1) argue a plain pose design behaves: out of contact,
// one side only, deeply interpenetrating (net F_y above a bound), or
// physically reasonable (both sides loaded, net F_y within the bound).
//
//	go run ./examples/tkr-contact/screen [-max 4000] out/tkr-contact-design/design.csv
package main

import (
	"encoding/csv"
	"flag"
	"fmt"
	"os"
	"strconv"
)

func main() {
	maxF := flag.Float64("max", 4000, "largest reasonable net F_y (N); 4000 N is about 1.5× the ISO 14243 peak axial load")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: screen [-max N] design.csv")
		os.Exit(2)
	}
	f, err := os.Open(flag.Arg(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil || len(rows) < 2 {
		fmt.Fprintln(os.Stderr, "screen: cannot read", flag.Arg(0), err)
		os.Exit(1)
	}
	col := map[string]int{}
	for i, n := range rows[0] {
		col[n] = i
	}
	for _, n := range []string{"status", "med_Fy_N", "lat_Fy_N"} {
		if _, ok := col[n]; !ok {
			fmt.Fprintf(os.Stderr, "screen: %s has no column %s\n", flag.Arg(0), n)
			os.Exit(1)
		}
	}
	var out, one, deep, ok, failed int
	for i, r := range rows[1:] {
		if r[col["status"]] != "ok" {
			failed++
			continue
		}
		m, err1 := strconv.ParseFloat(r[col["med_Fy_N"]], 64)
		l, err2 := strconv.ParseFloat(r[col["lat_Fy_N"]], 64)
		if err1 != nil || err2 != nil {
			fmt.Fprintf(os.Stderr, "screen: %s line %d: bad force\n", flag.Arg(0), i+2)
			os.Exit(1)
		}
		switch {
		case m == 0 && l == 0:
			out++
		case m+l > *maxF:
			deep++
		case m == 0 || l == 0:
			one++
		default:
			ok++
		}
	}
	n := len(rows) - 1
	pc := func(k int) string { return fmt.Sprintf("%d (%.1f %%)", k, 100*float64(k)/float64(n)) }
	fmt.Println("| poses | out of contact | one side only | net F_y > max | reasonable | failed |")
	fmt.Println("|---|---|---|---|---|---|")
	fmt.Printf("| %d | %s | %s | %s | %s | %s |\n", n, pc(out), pc(one), pc(deep), pc(ok), pc(failed))
}
