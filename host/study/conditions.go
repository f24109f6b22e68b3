package study

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/host/dataset"
	"github.com/kinfer/kinfer/host/tomlx"
)

// ConditionsName is the name of the dataset a study without [[data]] gets
// from its [conditions] table.
const ConditionsName = "conditions"

// loadConditions makes the one dataset of a study without [[data]] (a
// propagation study): the rows of its [conditions] table, one value per
// model condition column — a number (repeated on every row) or a list of
// numbers (all lists of one length, the number of rows). A model without
// condition columns needs no table: one row with no values. The dataset
// has no observations; Study.NoData is set.
func (s *Study) loadConditions(f *File, d *tomlx.Decoded) error {
	spec := s.ModelInfo.Spec
	s.NoData = true
	names := make([]string, 0, len(f.Conditions))
	for k := range f.Conditions {
		names = append(names, k)
	}
	sort.Strings(names)
	cols := make([]string, len(spec.Conditions))
	for i, c := range spec.Conditions {
		cols[i] = c.Name
	}
	for _, k := range names {
		if indexOf(cols, k) < 0 {
			return d.Errorf("conditions."+k, "model %q has no condition %q (conditions: %s)", spec.Name, k, conditionNames(spec))
		}
	}
	var missing []string
	vals := make([][]float64, len(cols))
	rows := 1
	for j, c := range cols {
		raw, ok := f.Conditions[c]
		if !ok {
			missing = append(missing, c)
			continue
		}
		key := "conditions." + c
		switch v := raw.(type) {
		case int64, float64:
			vals[j] = []float64{toFloat(v)}
		case []any:
			if len(v) == 0 {
				return d.Errorf(key, "give a number or a non-empty list of numbers")
			}
			for _, x := range v {
				switch x.(type) {
				case int64, float64:
				default:
					return d.Errorf(key, "give a number or a list of numbers, got %v", x)
				}
				vals[j] = append(vals[j], toFloat(x))
			}
			if len(v) > 1 {
				if rows > 1 && len(v) != rows {
					return d.Errorf(key, "%d values, but another condition has %d: the lists give the rows and must be of one length", len(v), rows)
				}
				rows = len(v)
			}
		default:
			return d.Errorf(key, "give a number or a list of numbers, got %s", tomlKind(raw))
		}
		for _, y := range vals[j] {
			if math.IsNaN(y) || math.IsInf(y, 0) {
				return d.Errorf(key, "conditions must be finite numbers, got %v", raw)
			}
		}
	}
	if len(missing) > 0 {
		return &tomlx.Error{File: d.File, Line: d.Line("conditions"), Key: "conditions",
			Msg: fmt.Sprintf("the study has no [[data]] table, so the model's conditions %s need values: give them in a [conditions] table (e.g. %s = 0), or add a [[data]] table", strings.Join(missing, ", "), missing[0])}
	}
	t := &dataset.Table{File: d.File, Columns: cols}
	for r := 0; r < rows; r++ {
		row := make([]float64, len(cols))
		for j := range cols {
			row[j] = vals[j][0]
			if len(vals[j]) > 1 {
				row[j] = vals[j][r]
			}
		}
		t.Rows = append(t.Rows, row)
		t.Lines = append(t.Lines, int32(d.Line("conditions")))
	}
	if err := s.charge(d, "conditions", t.Bytes()+int64(rows*len(cols))*8, "the [conditions] rows"); err != nil {
		return err
	}
	x, err := t.Matrix(cols)
	if err != nil {
		return d.Errorf("conditions", "%v", err)
	}
	s.Data = []*Dataset{{Name: ConditionsName, K: rows, X: x, table: t}}
	return nil
}

func conditionNames(s abi.Spec) string {
	if len(s.Conditions) == 0 {
		return "none"
	}
	n := make([]string, len(s.Conditions))
	for i, c := range s.Conditions {
		n[i] = c.Name
	}
	return strings.Join(n, ", ")
}

// checkPriorDraws refuses an init file for a method that needs genuine
// prior draws: its rows would not be used.
func (s *Study) checkPriorDraws(f *File, d *tomlx.Decoded) error {
	if f.Init == "" || !s.MethodInfo.Spec.NeedsPriorDraws() {
		return nil
	}
	return d.Errorf("init", "method %q draws its points from the prior (a TMCMC population and its evidence, a Monte Carlo propagation need genuine prior draws), so it takes no initial points: remove init", s.MethodInfo.Label())
}

// checkPropagation refuses a study without [[likelihood]] unless its
// method is a propagation method (abi.CapPropagation, a built-in or a
// plugin, abi/ABI.md §6.5), which reads the model's outputs instead of a
// posterior.
func (s *Study) checkPropagation(f *File, d *tomlx.Decoded) error {
	if len(s.Terms) > 0 || s.MethodInfo.Spec.Has(abi.CapPropagation) {
		return nil
	}
	what := "a [[likelihood]] table"
	if s.NoData {
		what = "[[data]] and [[likelihood]] tables"
	}
	key := "method.use"
	if _, ok := f.Method["plugin"]; ok {
		key = "method.plugin"
	}
	return d.Errorf(key, "method %q needs %s (it explores a posterior); a study without [[likelihood]] is a propagation study, for a propagation method such as montecarlo with quantity = \"<output>\"", s.MethodInfo.Spec.Name, what)
}
