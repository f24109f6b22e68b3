package study

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/kinfer/kinfer/builtin/models/surrogate"
	"github.com/kinfer/kinfer/host/safefile"
	"github.com/kinfer/kinfer/host/tomlx"
)

// SurrogateUse is the [model] use of a trained surrogate:
//
//	[model]
//	use = "surrogate"
//	file = "knee-nn.json"     # written by `kinfer train` (a network ensemble or, with --kind kriging, Kriging predictors)
//	trained_on = "knee"       # optional: refuse a surrogate of another model
//	sha256 = "…"              # optional: refuse any other file
//	outside = "invalid"       # conditions outside the training range: invalid | extrapolate
//	weights = "float64"       # a network's weights: float64 | float32 (rounded; faster, within ~1e-6 of the spread)
const SurrogateUse = "surrogate"

// SurrogatePrefix starts the Component.Ref of a surrogate model; the rest
// is the file's absolute path.
const SurrogatePrefix = "surrogate:"

// SurrogateLoadFactor bounds the memory loading a surrogate file takes,
// per byte of the file: about 1.8 for an ensemble (its weights decode
// straight from the text; docs/OUTPUTS.md), 2 with a margin.
const SurrogateLoadFactor = 2

func (s *Study) loadSurrogate(d *tomlx.Decoded, r componentRef, budget int64) error {
	str := func(key string, required bool) (string, error) {
		v, ok := r.settings[key]
		if !ok {
			if required {
				return "", &tomlx.Error{File: d.File, Line: d.Line("model"), Key: "model",
					Msg: fmt.Sprintf(`model "surrogate" needs file = "PATH" (a surrogate written by kinfer train)`)}
			}
			return "", nil
		}
		delete(r.settings, key)
		t, ok := v.(string)
		if !ok || t == "" {
			return "", d.Errorf("model."+key, "%s must be a non-empty string", key)
		}
		return t, nil
	}
	file, err := str("file", true)
	if err != nil {
		return err
	}
	want, err := str("trained_on", false)
	if err != nil {
		return err
	}
	pin, err := str("sha256", false)
	if err != nil {
		return err
	}
	path, err := filepath.Abs(s.resolvePath(file))
	if err != nil {
		return d.Errorf("model.file", "%v", err)
	}
	// Charged to the memory budget before it is read, as a plugin's
	// instances are (audit 7: bundles of a 178 MB network kept a worker at
	// 1.35 GB, and under an address-space limit it died out of memory).
	if st, err := os.Stat(path); err == nil && budget > 0 && SurrogateLoadFactor*st.Size() > budget {
		return d.Errorf("model.file", "%s: a surrogate file of %s needs about %s of memory to load, more than the memory budget of %s (kinfer run --memory-budget; a worker gives each of the studies it keeps loaded a quarter of its budget)",
			path, safefile.Bytes(st.Size()), safefile.Bytes(SurrogateLoadFactor*st.Size()), safefile.Bytes(budget))
	}
	b, err := safefile.ReadFile(path, surrogate.MaxFileBytes)
	if err != nil {
		return d.Errorf("model.file", "%v", err)
	}
	sf, err := surrogate.ReadFile(b)
	if err != nil {
		return d.Errorf("model.file", "%s: %v", path, err)
	}
	prov := sf.Provenance
	h := sha256.Sum256(b)
	sum := hex.EncodeToString(h[:])
	if pin != "" && !strings.EqualFold(pin, sum) {
		return d.Errorf("model.sha256", "%s has sha256 %s, the study pins %s", path, sum, pin)
	}
	if want != "" && prov.Model != want {
		src := prov.Model
		if src == "" {
			src = "an unnamed model"
		}
		return d.Errorf("model.trained_on", "%s is a surrogate of %s, the study wants one of %q", path, src, want)
	}
	spec, err := sf.Spec()
	if err != nil {
		return d.Errorf("model.file", "%s: %v", path, err)
	}
	vals, err := settingValues(d, r, spec)
	if err != nil {
		return err
	}
	m, err := sf.New(vals)
	if err != nil {
		return settingErr(d, "model", spec, err)
	}
	s.Model, s.ModelInfo = m, Component{Ref: SurrogatePrefix + path, Name: spec.Name, Spec: spec}
	return nil
}

// checkSurrogateConditions refuses, for a surrogate model that makes an
// evaluation Invalid when a row's conditions lie outside its training
// range (the default), a dataset with such rows: every evaluation of the
// study would be invalid, and the run would only say so point by point.
func (s *Study) checkSurrogateConditions(d *tomlx.Decoded) error {
	md, ok := s.Model.(*surrogate.Model)
	if !ok || md.Extrapolates() {
		return nil
	}
	for i, ds := range s.Data {
		rows := md.OutsideConditions(ds.X)
		if len(rows) == 0 {
			continue
		}
		key := fmt.Sprintf("data[%d].file", i)
		if s.NoData {
			key = "conditions"
		}
		var lines []string
		for _, r := range rows[:min(len(rows), 5)] {
			lines = append(lines, fmt.Sprint(r+1))
		}
		if len(rows) > 5 {
			lines = append(lines, "…")
		}
		// The first such row's values, exactly (9.500000000000002 is
		// outside [0, 9.5]).
		conds := s.ModelInfo.Spec.Conditions
		nc := len(conds)
		var first []string
		for j, c := range conds {
			first = append(first, c.Name+" = "+strconv.FormatFloat(ds.X[rows[0]*nc+j], 'g', -1, 64))
		}
		return d.Errorf(key, "%d of the %d rows of dataset %s (rows %s; row %d has %s) have conditions outside the surrogate's training range (%s), so every evaluation would be invalid; give rows inside it, or predict there anyway with outside = \"extrapolate\" in [model]",
			len(rows), ds.K, ds.Name, strings.Join(lines, ", "), rows[0]+1, strings.Join(first, ", "), md.ConditionRange())
	}
	return nil
}
