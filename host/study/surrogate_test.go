package study

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/builtin/surrogate/nn"
)

const surrCSV = "x,y0\n0.2,0.1\n0.5,0.3\n0.9,0.2\n"

const surrStudy = `name = "surr"

[model]
use = "surrogate"
file = "toy.json"
trained_on = "toy"

[[data]]
name = "d"
file = "d.csv"

[[likelihood]]
use = "gaussian"
sigma = 0.1

[prior]
a = { uniform = [0.0, 1.0] }
b = { uniform = [0.0, 1.0] }

[method]
use = "adam"
`

// writeToy writes a 3-input (a, b; condition x) → 2-output surrogate file,
// trained for one epoch (its values do not matter here).
func writeToy(t *testing.T, dir string) {
	t.Helper()
	r := rand.New(rand.NewPCG(1, 2))
	d := &nn.Data{In: 3, Out: 2, N: 50}
	for i := 0; i < d.N*3; i++ {
		d.X = append(d.X, r.Float64())
	}
	for i := 0; i < d.N*2; i++ {
		d.Y = append(d.Y, r.Float64())
	}
	cfg := nn.DefaultConfig()
	cfg.Hidden, cfg.Members, cfg.Epochs = []int{4}, 1, 1
	e, err := nn.Train(cfg, d, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := nn.Provenance{Model: "toy", InputNames: []string{"a", "b", "x"}, OutputNames: []string{"y0", "y1"},
		Conditions: 1, ParamLower: []float64{0, 0}, ParamUpper: []float64{1, 1}}
	if err := e.Save(filepath.Join(dir, "toy.json"), p); err != nil {
		t.Fatal(err)
	}
}

func loadSurr(t *testing.T, text string, prep func(dir string)) (*Study, error) {
	t.Helper()
	dir := t.TempDir()
	writeToy(t, dir)
	if err := os.WriteFile(filepath.Join(dir, "d.csv"), []byte(surrCSV), 0o644); err != nil {
		t.Fatal(err)
	}
	if prep != nil {
		prep(dir)
	}
	p := filepath.Join(dir, "study.toml")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return Load(context.Background(), p, Options{Workers: 1})
}

func TestSurrogateModelLoads(t *testing.T) {
	// With outside = "extrapolate", rows outside the training range load.
	s, err := loadSurr(t, strings.Replace(surrStudy, `trained_on = "toy"`, `outside = "extrapolate"`, 1), func(dir string) {
		os.WriteFile(filepath.Join(dir, "d.csv"), []byte("x,y0\n0.2,0.1\n1.5,0.2\n"), 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	s, err = loadSurr(t, surrStudy, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !strings.HasPrefix(s.ModelInfo.Ref, SurrogatePrefix) || s.ModelInfo.Spec.Name != "surrogate" || len(s.Free) != 2 ||
		!s.ModelInfo.Spec.Has(abi.CapVJP) {
		t.Fatalf("model %+v, free %v", s.ModelInfo, s.Free)
	}
	y := make([]float64, 3*2)
	if st := s.Model.Eval([]float64{0.5, 0.5}, s.Data[0].X, y); st != abi.OK {
		t.Fatalf("eval: %v", st)
	}
}

// A surrogate file that does not fit the study, or is not what the study
// pins, or is hostile, is refused with the study's file, line and key.
func TestSurrogateModelRefused(t *testing.T) {
	cases := []struct {
		name, want string
		edit       func(string) string
		prep       func(dir string)
	}{
		{"no file", `needs file = "PATH"`, func(s string) string { return strings.Replace(s, `file = "toy.json"`, "", 1) }, nil},
		{"file not a string", `model.file`, func(s string) string { return strings.Replace(s, `file = "toy.json"`, `file = 3`, 1) }, nil},
		{"missing", "no such file", func(s string) string { return strings.Replace(s, "toy.json", "nope.json", 1) }, nil},
		{"other model", `a surrogate of toy, the study wants one of "knee"`, func(s string) string { return strings.Replace(s, `trained_on = "toy"`, `trained_on = "knee"`, 1) }, nil},
		{"pinned digest", "the study pins 00ff", func(s string) string { return strings.Replace(s, `trained_on = "toy"`, `sha256 = "00ff"`, 1) }, nil},
		{"unknown parameter", `no parameter "k"`, func(s string) string { return strings.Replace(s, "b = {", "k = {", 1) }, nil},
		{"unknown setting", `no setting "cell_mm"`, func(s string) string { return strings.Replace(s, `trained_on = "toy"`, `cell_mm = 1.0`, 1) }, nil},
		{"bad outside", `not one of`, func(s string) string { return strings.Replace(s, `trained_on = "toy"`, `outside = "clamp"`, 1) }, nil},
		{"wrong input count", "the file names 2 inputs, the network has 3", nil, func(dir string) {
			b, _ := os.ReadFile(filepath.Join(dir, "toy.json"))
			os.WriteFile(filepath.Join(dir, "toy.json"), []byte(strings.Replace(string(b), `"a",`, ``, 1)), 0o644)
		}},
		{"garbage", "model.file", nil, func(dir string) { os.WriteFile(filepath.Join(dir, "toy.json"), []byte("\x00\x01PK"), 0o644) }},
		{"deeply nested", "model.file", nil, func(dir string) {
			os.WriteFile(filepath.Join(dir, "toy.json"), []byte(`{"format":`+strings.Repeat("[", 200000)), 0o644)
		}},
		{"huge layer sizes", "width", nil, func(dir string) {
			os.WriteFile(filepath.Join(dir, "toy.json"), []byte(`{"format":"kinfer-nn-ensemble","format_version":1,"activation":"softplus","weights":[1],"networks":[{"sizes":[3,1000000000,2]}]}`), 0o644)
		}},
		// Once loaded, and every evaluation was then invalid.
		{"inverted training box", "training box of input 3 is [2, 1]", nil, func(dir string) {
			p := filepath.Join(dir, "toy.json")
			b, _ := os.ReadFile(p)
			var f map[string]any
			json.Unmarshal(b, &f)
			f["input_lo"].([]any)[2], f["input_hi"].([]any)[2] = 2.0, 1.0
			b, _ = json.Marshal(f)
			os.WriteFile(p, b, 0o644)
		}},
		// Rows outside the conditions' training range: every evaluation
		// would be invalid, so the study is refused at load.
		{"data outside the training range", "1 of the 3 rows of dataset d (rows 3; row 3 has x = 1.5) have conditions outside the surrogate's training range (x in [", nil, func(dir string) {
			os.WriteFile(filepath.Join(dir, "d.csv"), []byte("x,y0\n0.2,0.1\n0.5,0.3\n1.5,0.2\n"), 0o644)
		}},
		{"a directory", "model.file", nil, func(dir string) {
			os.Remove(filepath.Join(dir, "toy.json"))
			os.Mkdir(filepath.Join(dir, "toy.json"), 0o755)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			text := surrStudy
			if c.edit != nil {
				text = c.edit(text)
			}
			s, err := loadSurr(t, text, c.prep)
			if err == nil {
				s.Close()
				t.Fatalf("accepted")
			}
			if !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "study.toml:") {
				t.Fatalf("error %q, want it to name study.toml and contain %q", err, c.want)
			}
			t.Log(err)
		})
	}
}

// TestNameListBounded: an error listing a model's parameters lists 20 and
// counts the rest (a surrogate file naming 10 000 inputs made a 69 kB
// message).
func TestNameListBounded(t *testing.T) {
	var names []string
	for i := range 10000 {
		names = append(names, "x"+strconv.Itoa(i))
	}
	got := nameList(names)
	if !strings.HasSuffix(got, "x19 … and 9980 more") || len(got) > 200 {
		t.Errorf("%q", got)
	}
	if nameList(names[:3]) != "x0, x1, x2" {
		t.Errorf("%q", nameList(names[:3]))
	}
}

// A surrogate file is charged to the memory budget before it is read:
// one needing more (about twice its size) is refused naming the study's
// key (audit 7: bundles of a 178 MB network kept a worker at 1.35 GB).
func TestSurrogateMemoryBudget(t *testing.T) {
	dir := t.TempDir()
	writeToy(t, dir)
	os.WriteFile(filepath.Join(dir, "d.csv"), []byte(surrCSV), 0o644)
	p := filepath.Join(dir, "study.toml")
	os.WriteFile(p, []byte(surrStudy), 0o644)
	st, err := os.Stat(filepath.Join(dir, "toy.json"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = Load(context.Background(), p, Options{Workers: 1, MemoryBudget: st.Size()})
	if err == nil || !strings.Contains(err.Error(), `key "model.file"`) || !strings.Contains(err.Error(), "more than the memory budget") {
		t.Fatalf("a budget of the file's size: %v", err)
	}
	s, err := Load(context.Background(), p, Options{Workers: 1, MemoryBudget: SurrogateLoadFactor * st.Size()})
	if err != nil {
		t.Fatalf("a budget of twice the file: %v", err)
	}
	s.Close()
}
