package study

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/host/wasm"
)

// A propagation study: the line model, no [[data]], no [[likelihood]].
const prop = `name = "p"
[model]
use = "line"
[conditions]
x = [1.0, 2.0, 3.0]
[prior]
a = { uniform = [0.0, 1.0] }
b = { uniform = [0.0, 1.0] }
[method]
use = "montecarlo"
quantity = "y"
`

// Without [[data]] the [conditions] rows are the one dataset (a number is
// repeated on every row); without [[likelihood]] there are no terms; the
// quantity's output name is passed as its index.
func TestPropagationStudyLoads(t *testing.T) {
	s, err := load(t, prop)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !s.NoData || len(s.Data) != 1 || s.Data[0].Name != ConditionsName || s.Data[0].K != 3 || len(s.Terms) != 0 {
		t.Fatalf("data %+v terms %d", s.Data, len(s.Terms))
	}
	if x := s.Data[0].X; len(x) != 3 || x[0] != 1 || x[2] != 3 {
		t.Fatalf("conditions %v", x)
	}
	if !s.MethodInfo.Spec.Has(abi.CapPropagation) {
		t.Fatal("montecarlo is not a propagation method")
	}
	one, err := load(t, strings.Replace(prop, "x = [1.0, 2.0, 3.0]", "x = 4", 1))
	if err != nil {
		t.Fatal(err)
	}
	defer one.Close()
	if one.Data[0].K != 1 || one.Data[0].X[0] != 4 {
		t.Fatalf("one row: %+v", one.Data[0])
	}
}

// Hostile propagation studies: each error names the file, the line where
// one exists, the key, and what would be accepted.
func TestPropagationStudyErrors(t *testing.T) {
	withData := strings.Replace(base, "[[likelihood]]\nuse = \"gaussian\"\ndata = \"pull\"\nsigma = { force_N = 5.0 }\n", "", 1)
	cases := []struct{ text, want string }{
		// A quantity that is not an output: the outputs are listed.
		{strings.Replace(prop, `quantity = "y"`, `quantity = "force"`, 1), `study.toml:11: key "method.quantity": setting "quantity": model "line" has no output "force" (outputs: y)`},
		{strings.Replace(prop, `quantity = "y"`, `quantity = 0`, 1), `key "method.quantity": setting "quantity" takes the name of one of model "line"'s outputs (y)`},
		// A sampler without likelihood (and without data).
		{strings.Replace(strings.Replace(prop, `use = "montecarlo"`, `use = "metropolis"`, 1), `quantity = "y"`, "", 1), `study.toml:10: key "method.use": method "metropolis" needs [[data]] and [[likelihood]] tables`},
		// With data but without likelihood.
		{withData, `study.toml:18: key "method.use": method "metropolis" needs a [[likelihood]] table`},
		// A likelihood without data.
		{prop + "[[likelihood]]\nuse = \"gaussian\"\nsigma = 1.0\n", `key "likelihood[0]": a [[likelihood]] compares the model with observations, but the study has no [[data]] table`},
		// Conditions: missing, unknown, ragged, not numbers, beside data.
		{strings.Replace(prop, "x = [1.0, 2.0, 3.0]", "", 1), `key "conditions": the study has no [[data]] table, so the model's conditions x need values`},
		{strings.Replace(prop, "x = [1.0, 2.0, 3.0]", "x = 1.0\nz = 2.0", 1), `key "conditions.z": model "line" has no condition "z" (conditions: x)`},
		{strings.Replace(prop, "x = [1.0, 2.0, 3.0]", `x = "one"`, 1), `key "conditions.x": give a number or a list of numbers`},
		{strings.Replace(prop, "x = [1.0, 2.0, 3.0]", `x = [1.0, "two"]`, 1), `key "conditions.x": give a number or a list of numbers`},
		{strings.Replace(prop, "x = [1.0, 2.0, 3.0]", `x = []`, 1), `key "conditions.x": give a number or a non-empty list`},
		{strings.Replace(base, "[prior]", "[conditions]\nlength_mm = 30.0\n[prior]", 1), `key "conditions": [conditions] is for a study without [[data]]`},
	}
	for i, c := range cases {
		s, err := load(t, c.text)
		if err == nil {
			s.Close()
			t.Errorf("case %d: loaded, want %q", i, c.want)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("case %d:\n got %v\nwant %s", i, err, c.want)
		}
	}
}

// A method plugin without capability propagation (nockpt, a Metropolis
// sampler) cannot run a study without likelihood: refused at its key.
func TestPropagationRefusesMethodPlugin(t *testing.T) {
	dir := t.TempDir()
	man, err := filepath.Abs(filepath.Join("..", "testdata", "plugins", "nockpt", "plugin.toml"))
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(strings.Replace(prop, `use = "montecarlo"`, `plugin = "`+man+`"`, 1), `quantity = "y"`, "", 1)
	p := filepath.Join(dir, "study.toml")
	os.WriteFile(p, []byte(text), 0o644)
	rt, err := wasm.NewRuntime(context.Background(), wasm.Options{CacheDir: "-"})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(context.Background())
	s, err := Load(context.Background(), p, Options{Workers: 1, Runtime: rt})
	if err == nil {
		s.Close()
		t.Fatal("a method plugin ran a study without likelihood")
	}
	if want := `study.toml:10: key "method.plugin": method "nockpt" needs [[data]] and [[likelihood]] tables`; !strings.Contains(err.Error(), want) {
		t.Fatalf("got %v\nwant %s", err, want)
	}
}
