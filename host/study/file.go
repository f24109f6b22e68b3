package study

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/host/tomlx"
)

// File is the raw decoded study.toml.
type File struct {
	Name       string                          `toml:"name"`
	Seed       *int64                          `toml:"seed"`
	Model      map[string]any                  `toml:"model"`
	Data       []DataFile                      `toml:"data"`
	Likelihood []map[string]any                `toml:"likelihood"`
	Prior      map[string]map[string][]float64 `toml:"prior"`
	Fixed      map[string]float64              `toml:"fixed"`
	Method     map[string]any                  `toml:"method"`
	Transform  map[string]any                  `toml:"transform"`
	Init       string                          `toml:"init"`
	// Conditions are the condition rows of a study without [[data]] (a
	// propagation study): condition name → a number or a list of numbers
	// (all lists of one length; a number is repeated on every row).
	Conditions map[string]any   `toml:"conditions"`
	Constraint []ConstraintFile `toml:"constraint"`
	// Jacobian chooses how ∂r/∂θ is computed for least-squares methods:
	// "auto" (default), "analytic", "forward" or "central".
	Jacobian string `toml:"jacobian"`
	// Stages make a multi-stage study: the study files of its stages, run
	// in order, each starting from the previous one's result (Options.Previous).
	// A multi-stage study file holds name, seed and stages only.
	Stages []string `toml:"stages"`
}

// DataFile is one [[data]] table.
type DataFile struct {
	Name    string   `toml:"name"`
	File    string   `toml:"file"`
	Outputs []string `toml:"outputs"`
	// Columns maps the model's names (conditions, outputs, sigma_<output>)
	// to the file's labels, e.g. { grf_y = "ground_force_vy" } for an
	// OpenSim .mot.
	// (Decoded as any, so that a value of another kind — a list, a string —
	// is refused by name rather than dropped by the decoder.)
	Columns any `toml:"columns"`
}

// componentRef is the "use = NAME" or "plugin = PATH" choice of a component
// table, and the remaining keys, which are the component's settings.
type componentRef struct {
	table    string // dotted key of the table, e.g. "model" or "likelihood[1]"
	use      string
	plugin   string
	trusted  bool // the study allows the plugin to run without a timeout
	certify  bool // check the plugin's determinism before the run
	settings map[string]any
}

func parseRef(d *tomlx.Decoded, table string, raw map[string]any, reserved ...string) (componentRef, error) {
	r := componentRef{table: table, settings: map[string]any{}}
	if raw == nil {
		name := strings.Split(table, ".")[0]
		if d.Has(name) {
			// [[method]] where [method] was meant (audit 4).
			return r, &tomlx.Error{File: d.File, Line: d.Line(name), Key: table, Msg: fmt.Sprintf("[[%s]] is a list of tables: write [%s], with single brackets (a study has one)", name, name)}
		}
		return r, &tomlx.Error{File: d.File, Key: table, Msg: fmt.Sprintf("missing [%s] table", name)}
	}
	for k, v := range raw {
		switch {
		case k == "use" || k == "plugin":
			s, ok := v.(string)
			if !ok || s == "" {
				return r, d.Errorf(table+"."+k, "%s must be a non-empty string", k)
			}
			if k == "use" {
				r.use = s
			} else {
				r.plugin = s
			}
		case k == "trusted" || k == "certify":
			b, ok := v.(bool)
			if !ok {
				return r, d.Errorf(table+"."+k, "%s must be true or false", k)
			}
			if k == "trusted" {
				r.trusted = b
			} else {
				r.certify = b
			}
		case contains(reserved, k):
		default:
			r.settings[k] = v
		}
	}
	if (r.use == "") == (r.plugin == "") {
		return r, &tomlx.Error{File: d.File, Line: d.Line(table), Key: table,
			Msg: `give exactly one of use = "NAME" (a built-in) or plugin = "path/to/plugin.toml"`}
	}
	if r.trusted && r.plugin == "" {
		return r, d.Errorf(table+".trusted", "trusted applies to plugins only")
	}
	if r.certify && r.plugin == "" {
		return r, d.Errorf(table+".certify", "certify applies to plugins only")
	}
	r.use = strings.TrimPrefix(r.use, "builtin:")
	return r, nil
}

// settingValues resolves a component's settings (TOML values by name) into
// the numeric vector of its spec: numbers as they are, booleans as 0/1, a
// string as the index of one of the setting's choices.
func settingValues(d *tomlx.Decoded, r componentRef, spec abi.Spec) ([]float64, error) {
	return settingValuesOf(d, r, spec, abi.Spec{})
}

// settingValuesOf is settingValues for a method of a study whose model is
// model: a setting with Output takes the name of one of model's outputs,
// passed as its index.
func settingValuesOf(d *tomlx.Decoded, r componentRef, spec, model abi.Spec) ([]float64, error) {
	given := map[string]float64{}
	keys := make([]string, 0, len(r.settings))
	for k := range r.settings {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return d.Line(r.table+"."+keys[i]) < d.Line(r.table+"."+keys[j]) })
	for _, k := range keys {
		key := r.table + "." + k
		var s *abi.Setting
		for i := range spec.Settings {
			if spec.Settings[i].Name == k {
				s = &spec.Settings[i]
			}
		}
		if s == nil {
			return nil, d.Errorf(key, "%s %q has no setting %q (settings: %s)", spec.Kind, spec.Name, k, settingNames(spec))
		}
		switch v := r.settings[k].(type) {
		case int64:
			given[k] = float64(v)
		case float64:
			given[k] = v
		case bool:
			given[k] = 0
			if v {
				given[k] = 1
			}
		case string:
			if s.Output {
				i := outputIndex(model, v)
				if i < 0 {
					return nil, d.Errorf(key, "setting %q: model %q has no output %q (outputs: %s)", k, model.Name, v, outputNames(model))
				}
				given[k] = float64(i)
				break
			}
			i := indexOf(s.Choices, v)
			if i < 0 {
				if len(s.Choices) == 0 {
					return nil, d.Errorf(key, "setting %q takes a number, got the string %q", k, v)
				}
				return nil, d.Errorf(key, "setting %q: %q is not one of %q", k, v, s.Choices)
			}
			given[k] = float64(i)
		default:
			return nil, d.Errorf(key, "setting %q takes a number, got %s", k, tomlKind(v))
		}
		if s.Output {
			if _, isStr := r.settings[k].(string); !isStr {
				return nil, d.Errorf(key, "setting %q takes the name of one of model %q's outputs (%s)", k, model.Name, outputNames(model))
			}
		}
		if len(s.Choices) > 0 {
			if _, isStr := r.settings[k].(string); !isStr {
				return nil, d.Errorf(key, "setting %q takes one of %q, written as a string (%s = %q), got %s", k, s.Choices, k, s.Choices[0], tomlKind(r.settings[k]))
			}
		}
		if math.IsNaN(given[k]) || math.IsInf(given[k], 0) {
			return nil, d.Errorf(key, "setting %q must be finite", k)
		}
	}
	vals, err := abi.SettingValues(spec.Settings, given)
	if err != nil {
		return nil, &tomlx.Error{File: d.File, Line: d.Line(r.table), Key: r.table, Msg: fmt.Sprintf("%s %q: %v", spec.Kind, spec.Name, err)}
	}
	return vals, nil
}

func settingNames(s abi.Spec) string {
	if len(s.Settings) == 0 {
		return "none"
	}
	n := make([]string, len(s.Settings))
	for i, x := range s.Settings {
		n[i] = x.Name
	}
	return strings.Join(n, ", ")
}

func contains(list []string, s string) bool { return indexOf(list, s) >= 0 }

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}

// IsMultiStage reports whether the decoded file is a multi-stage study (it
// has a stages key) and checks its shape: a non-empty list of non-empty
// file names, and no key besides name, seed and stages (a [method] or
// [prior] there would be ignored, since each stage is a study file of its
// own).
func (f *File) IsMultiStage(d *tomlx.Decoded) (bool, error) {
	if !d.Has("stages") {
		return false, nil
	}
	if len(f.Stages) == 0 {
		return true, d.Errorf("stages", "the list of stage study files is empty")
	}
	if err := CheckName(d, f.Name); err != nil {
		return true, err
	}
	for i, st := range f.Stages {
		if strings.TrimSpace(st) == "" {
			return true, d.Errorf("stages", "stage %d has an empty file name", i+1)
		}
		// The file's name names the stage's folder and is printed.
		if strings.IndexFunc(st, badNameRune) >= 0 {
			return true, d.Errorf("stages", "stage %d's file name %q has a control character or invalid UTF-8", i+1, st)
		}
	}
	if f.Seed != nil && *f.Seed < 0 {
		return true, d.Errorf("seed", "seed must be ≥ 0")
	}
	seen := map[string]bool{}
	for _, k := range d.Meta.Keys() {
		top := k[0]
		if top == "name" || top == "seed" || top == "stages" || seen[top] {
			continue
		}
		seen[top] = true
		return true, d.Errorf(top, "a multi-stage study file holds only name, seed and stages; put %s in the stages' study files (each stage is a study of its own)", top)
	}
	return true, nil
}

// badNameRune: a control character, a bidirectional control (which would
// reorder what a terminal shows) or invalid UTF-8, in a name kinfer prints
// and makes a folder of.
func badNameRune(r rune) bool {
	return unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) || r == utf8.RuneError
}

// maxNameBytes bounds a study's name.
const maxNameBytes = 200

// CheckName checks a study's name, which names its default output folder
// (out/<name>, out/<name>-design): one plain folder name, so that a study
// file cannot make kinfer write outside out/ ("..", "../x", "/abs") or
// into an odd folder (".", " ", control characters).
func CheckName(d *tomlx.Decoded, name string) error {
	bad := ""
	switch {
	case name == "" || name == "." || name == "..":
		bad = "is not a folder name"
	case len(name) > maxNameBytes:
		bad = fmt.Sprintf("is longer than %d bytes", maxNameBytes)
	case strings.ContainsAny(name, `/\`):
		bad = "has a path separator"
	case strings.TrimSpace(name) != name:
		bad = "starts or ends with a space"
	case strings.IndexFunc(name, badNameRune) >= 0:
		bad = "has a control character or invalid UTF-8"
	}
	if bad == "" {
		return nil
	}
	return d.Errorf("name", "name %.60q %s; the name is one folder name (the default output folder is out/<name>), e.g. \"knee-specimen1\"", name, bad)
}

// tomlKind names the kind of a decoded TOML value as a study writes it,
// for messages ("a table", not map[string]interface {}).
func tomlKind(v any) string {
	switch v.(type) {
	case map[string]any:
		return "a table"
	case []any, []map[string]any:
		return "a list"
	case string:
		return "a string"
	case bool:
		return "true or false"
	case int64, float64:
		return "a number"
	}
	return fmt.Sprintf("a value of type %T", v)
}

// columnsTable is a [[data]] table's columns: a table of the model's
// names to the file's labels, or nothing.
func columnsTable(d *tomlx.Decoded, tbl string, v any) (map[string]string, error) {
	if v == nil {
		return nil, nil
	}
	bad := func() error {
		return d.Errorf(tbl+".columns", "columns maps the model's names to the file's labels, e.g. columns = { x = \"t\", y = \"force\" }; got %s", tomlKind(v))
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, bad()
	}
	out := make(map[string]string, len(m))
	for k, x := range m {
		label, ok := x.(string)
		if !ok || label == "" {
			return nil, d.Errorf(tbl+".columns", "columns.%s must be a file label (a non-empty string), got %s", k, tomlKind(x))
		}
		out[k] = label
	}
	return out, nil
}
