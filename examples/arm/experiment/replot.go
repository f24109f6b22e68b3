package main

import (
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
)

// Replot redraws Fig. 3 and Fig. 4 of a results directory from its
// committed criteria.csv (per method and run) and curves.csv (median and
// quartiles per method and iteration), without the runs' summary.json:
// the figures of results/ after a change of the plotting code.
func Replot(dir string, w io.Writer) error {
	crit, err := readCSV(filepath.Join(dir, "criteria.csv"))
	if err != nil {
		return err
	}
	var rows []Row
	for i, r := range crit.rows {
		run, err := strconv.Atoi(r["run"])
		if err != nil {
			return fmt.Errorf("criteria.csv:%d: run %q", i+2, r["run"])
		}
		row := Row{Method: r["method"], Run: run}
		for _, f := range []struct {
			col string
			v   *float64
		}{{"C1", &row.C1}, {"C2", &row.C2}, {"C3", &row.C3}, {"C3m", &row.C3m}} {
			if *f.v, err = strconv.ParseFloat(r[f.col], 64); err != nil {
				return fmt.Errorf("criteria.csv:%d: %s: %v", i+2, f.col, err)
			}
		}
		rows = append(rows, row)
	}
	files := map[string]string{}
	for j, name := range []string{"fig4-C3.svg", "fig4-C3m.svg"} {
		if files[name], err = Fig4(rows, j); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	cur, err := readCSV(filepath.Join(dir, "curves.csv"))
	if err != nil {
		return err
	}
	all := map[string][3]Band{}
	for i, r := range cur.rows {
		bs := all[r["method"]]
		n, err := strconv.ParseFloat(r["iteration"], 64)
		if err != nil {
			return fmt.Errorf("curves.csv:%d: iteration: %v", i+2, err)
		}
		for k, c := range []string{"C1", "C2", "C3m"} {
			var v [3]float64
			for q, suf := range []string{"_median", "_q1", "_q3"} {
				if v[q], err = strconv.ParseFloat(r[c+suf], 64); err != nil {
					return fmt.Errorf("curves.csv:%d: %s: %v", i+2, c+suf, err)
				}
			}
			b := &bs[k]
			b.N, b.Median, b.Q1, b.Q3 = append(b.N, n), append(b.Median, v[0]), append(b.Q1, v[1]), append(b.Q3, v[2])
		}
		all[r["method"]] = bs
	}
	for j, name := range []string{"fig3-C1.svg", "fig3-C2.svg"} {
		if files[name], err = fig3(all, j); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return writeFiles(dir, files, w)
}

type csvTable struct {
	header []string
	rows   []map[string]string
}

func readCSV(path string) (*csvTable, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(recs) < 2 {
		return nil, fmt.Errorf("%s: no rows", path)
	}
	t := &csvTable{header: recs[0]}
	for _, r := range recs[1:] {
		m := map[string]string{}
		for i, h := range t.header {
			m[h] = r[i]
		}
		t.rows = append(t.rows, m)
	}
	return t, nil
}
