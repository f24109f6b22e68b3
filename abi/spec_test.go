package abi

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

func TestValidate(t *testing.T) {
	ok := Spec{Kind: KindModel, Name: "m", Params: []Param{{Name: "a", Lower: 0, Upper: 1}}, Outputs: []Column{{Name: "y"}}}
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	bad := []struct {
		mod  func(*Spec)
		want string
	}{
		{func(s *Spec) { s.Kind = "modle" }, "unknown kind"},
		{func(s *Spec) { s.Name = "" }, "empty name"},
		{func(s *Spec) { s.Params = append(s.Params, Param{Name: "a", Lower: 0, Upper: 1}) }, `duplicate param name "a"`},
		{func(s *Spec) { s.Params[0].Upper = 0 }, "want lower < upper"},
		{func(s *Spec) { s.Outputs = nil }, "at least one param and one output"},
		{func(s *Spec) { s.Params[0].Upper = math.Inf(1) }, "want finite bounds"},
		{func(s *Spec) { s.Params[0].Default = 1.5 }, `param "a" has default 1.5 outside its bounds [0, 1]`},
		{func(s *Spec) { s.Params[0].Default = -0.1 }, "outside its bounds"},
		{func(s *Spec) { s.Params[0].Lower, s.Params[0].Upper = 1, 2 }, `has default 0 outside its bounds [1, 2] (a param without "default" has the default 0`},
		{func(s *Spec) { s.Params[0].Default = math.NaN() }, "outside its bounds"},
		{func(s *Spec) { s.Settings = []Setting{{Name: "v", Default: 2, Choices: []string{"a", "b"}}} }, `setting "v" has default 2; with choices [a b] the default is an index, 0 to 1`},
		{func(s *Spec) { s.Settings = []Setting{{Name: "v", Default: 0.5, Choices: []string{"a", "b"}}} }, "the default is an index"},
		{func(s *Spec) { s.Settings = []Setting{{Name: "v", Default: -1, Choices: []string{"a", "b"}}} }, "the default is an index"},
		{func(s *Spec) { s.Settings = []Setting{{Name: "v", Choices: []string{"a", "a"}}} }, `lists choice "a" twice`},
		{func(s *Spec) { s.Settings = []Setting{{Name: "v", Choices: []string{""}}} }, "empty choice"},
		{func(s *Spec) { s.Kind = KindLikelihood }, "a likelihood has no params (only a model does), got 1"},
		{func(s *Spec) { s.Kind, s.Params = KindMethod, nil }, "a method has no outputs (only a model does), got 1"},
		{func(s *Spec) {
			s.Kind, s.Params, s.Outputs, s.Conditions = KindLikelihood, nil, nil, []Column{{Name: "x"}}
		}, "a likelihood has no conditions"},
		// Names a dataset or samples.csv would read twice.
		{func(s *Spec) { s.Conditions = []Column{{Name: "y"}} }, `"y" is both a condition and an output`},
		{func(s *Spec) { s.Outputs = append(s.Outputs, Column{Name: "sigma_y"}) }, `output "sigma_y" would be read as the σ column of output "y"`},
		{func(s *Spec) { s.Conditions = []Column{{Name: "sigma_y"}} }, `condition "sigma_y" would be read as the σ column of output "y"`},
		{func(s *Spec) { s.Params[0].Name = "log_prior" }, `param "log_prior" has a name samples.csv reserves`},
		{func(s *Spec) { s.Params[0].Name = "log_likelihood" }, `param "log_likelihood" has a name samples.csv reserves`},
		{func(s *Spec) { s.Outputs = []Column{{Name: "c\nz"}} }, `output name "c\nz" has a control character`},
		{func(s *Spec) { s.Params[0].Name = "a\x1b[31m" }, "has a control character"},
		{func(s *Spec) { s.Params[0].Name = "a\u202eb" }, "has a control character"},
		{func(s *Spec) { s.Params[0].Name = " a" }, "begins or ends with white space"},
		{func(s *Spec) { s.Conditions = []Column{{Name: "x "}} }, "begins or ends with white space"},
		{func(s *Spec) { s.Outputs = []Column{{Name: "\ufeffy"}} }, "byte-order mark"},
		{func(s *Spec) { s.Settings = []Setting{{Name: "v", Choices: []string{"ok", "x\ny"}}} }, `has choice "x\ny" with a control character`},
	}
	for _, r := range ReservedSettingNames {
		bad = append(bad, struct {
			mod  func(*Spec)
			want string
		}{func(s *Spec) { s.Settings = []Setting{{Name: r}} }, fmt.Sprintf("setting %q has a name the study reserves", r)})
	}
	for _, b := range bad {
		s := ok
		s.Params = append([]Param(nil), ok.Params...)
		b.mod(&s)
		if err := s.Validate(); err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("want %q, got %v", b.want, err)
		}
	}
	// What is allowed: a default on a bound, a choice index in range, and a
	// likelihood or method with settings only.
	good := ok
	good.Params = []Param{{Name: "a", Lower: 0, Upper: 1, Default: 1}}
	good.Settings = []Setting{{Name: "v", Default: 1, Choices: []string{"a", "b"}}, {Name: "use_fast", Default: 3.5}}
	if err := good.Validate(); err != nil {
		t.Error(err)
	}
	for _, k := range []Kind{KindLikelihood, KindMethod} {
		s := Spec{Kind: k, Name: "x", Settings: good.Settings}
		if err := s.Validate(); err != nil {
			t.Errorf("%s: %v", k, err)
		}
	}
}

func TestSettingValues(t *testing.T) {
	specs := []Setting{{Name: "a", Default: 2}, {Name: "b", Required: true}}
	v, err := SettingValues(specs, map[string]float64{"b": 5})
	if err != nil || v[0] != 2 || v[1] != 5 {
		t.Fatalf("%v %v", v, err)
	}
	if _, err := SettingValues(specs, map[string]float64{}); err == nil || !strings.Contains(err.Error(), `"b" is required`) {
		t.Fatalf("got %v", err)
	}
	if _, err := SettingValues(specs, map[string]float64{"b": 1, "c": 1}); err == nil || !strings.Contains(err.Error(), `unknown setting "c"`) {
		t.Fatalf("got %v", err)
	}
}
