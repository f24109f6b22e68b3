package nn

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestConfigRefusesNonFinite: a NaN or infinite setting is refused before
// training (a NaN passed the range checks and failed only when the trained
// file was written: hours lost, and an empty file left).
func TestConfigRefusesNonFinite(t *testing.T) {
	good := gridData(10, 1)
	set := map[string]func(c *Config, v float64){
		"HuberDelta": func(c *Config, v float64) { c.HuberDelta = v }, "LearningRate": func(c *Config, v float64) { c.LearningRate = v },
		"L2": func(c *Config, v float64) { c.L2 = v }, "Dropout": func(c *Config, v float64) { c.Dropout = v },
		"DecayFactor": func(c *Config, v float64) { c.DecayFactor = v }, "PlateauMinDelta": func(c *Config, v float64) { c.PlateauMinDelta = v },
		"MinLearningRate": func(c *Config, v float64) { c.MinLearningRate = v }, "Epsilon": func(c *Config, v float64) { c.Epsilon = v },
	}
	for name, f := range set {
		for _, v := range []float64{math.NaN(), math.Inf(1)} {
			c := smallConfig()
			c.Epochs = 1
			f(&c, v)
			if _, err := Train(c, good, nil); err == nil || !strings.Contains(err.Error(), name) {
				t.Errorf("%s = %v: error %v", name, v, err)
			}
		}
	}
}

// TestTrainRefusesUnnormalisable: outputs near the float64 limit (1e308)
// have an infinite mean and standard deviation; the training refuses them
// up front, naming the column, instead of failing on save.
func TestTrainRefusesUnnormalisable(t *testing.T) {
	d := gridData(10, 1)
	d.Y[0], d.Y[1] = 1e308, 1e308
	c := smallConfig()
	c.Epochs = 1
	if _, err := Train(c, d, nil); err == nil || !strings.Contains(err.Error(), "output 1") {
		t.Errorf("error %v, want one naming output 1", err)
	}
}

// TestTrainReportsDivergence: a learning rate of 1e300 makes the weights
// non-finite; Train says which member diverged instead of returning an
// ensemble that cannot be written or read.
func TestTrainReportsDivergence(t *testing.T) {
	d := gridData(50, 1)
	c := smallConfig()
	c.Epochs, c.Members, c.LearningRate = 3, 1, 1e300
	if _, err := Train(c, d, d); err == nil || !strings.Contains(err.Error(), "member 1 diverged") {
		t.Errorf("error %v", err)
	}
}

// TestReadHostile: another surrogate format is named as such (not by its
// first unknown field), and a training box with lo > hi is refused (it
// made every evaluation of the surrogate model invalid).
func TestReadHostile(t *testing.T) {
	kr := `{"format": "kinfer-kriging", "format_version": 1, "sites": 3}`
	if _, _, err := Read(strings.NewReader(kr)); err == nil || !strings.Contains(err.Error(), `format "kinfer-kriging"`) {
		t.Errorf("a Kriging file: error %v", err)
	}
	e := &Ensemble{Nets: []*Net{randNet([]int{2, 3, 1}, 1)}, Weights: []float64{1}, InputLo: []float64{0, 5}, InputHi: []float64{1, 4}}
	var buf bytes.Buffer
	if err := e.Write(&buf, Provenance{}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Read(&buf); err == nil || !strings.Contains(err.Error(), "training box of input 2") {
		t.Errorf("box lo > hi: error %v", err)
	}
}

// TestReadRefusesNull: a null inside a list of numbers (a bound, a
// normalisation, an ensemble weight) is refused; encoding/json alone reads
// it as 0, a silently wrong box or network.
func TestReadRefusesNull(t *testing.T) {
	e := &Ensemble{Nets: []*Net{randNet([]int{2, 3, 1}, 1)}, Weights: []float64{1}, InputLo: []float64{0, 0}, InputHi: []float64{1, 1}}
	var buf bytes.Buffer
	if err := e.Write(&buf, Provenance{ParamLower: []float64{0}, ParamUpper: []float64{1}}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Read(bytes.NewReader(buf.Bytes())); err != nil {
		t.Fatalf("the untouched file: %v", err)
	}
	for _, key := range []string{"input_lo", "input_hi", "weights", "x_mean", "y_sd", "param_lower"} {
		var doc map[string]any
		if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
			t.Fatal(err)
		}
		set := func(m map[string]any) {
			if l, ok := m[key].([]any); ok {
				l[0] = nil
			}
		}
		set(doc)
		set(doc["provenance"].(map[string]any))
		set(doc["networks"].([]any)[0].(map[string]any))
		b, _ := json.Marshal(doc)
		if !bytes.Contains(b, []byte("[null")) {
			t.Fatalf("%s: no null written", key)
		}
		if _, _, err := Read(bytes.NewReader(b)); err == nil || !strings.Contains(err.Error(), "null") {
			t.Errorf("null in %s: error %v", key, err)
		}
	}
}

// TestSaveFailureLeavesOldFile: a Save that fails (here an ensemble
// weight NaN) leaves no file, and an existing file untouched.
func TestSaveFailureLeavesOldFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "nn.json")
	e := &Ensemble{Nets: []*Net{randNet([]int{2, 3, 1}, 1)}, Weights: []float64{math.NaN()}}
	if err := e.Save(p, Provenance{}); err == nil || !strings.Contains(err.Error(), p) {
		t.Errorf("error %v, want one naming %s", err, p)
	}
	if _, err := os.Stat(p); !os.IsNotExist(err) {
		t.Errorf("a failed Save left %s (%v)", p, err)
	}
	os.WriteFile(p, []byte("old"), 0o644)
	e.Save(p, Provenance{})
	if b, _ := os.ReadFile(p); string(b) != "old" {
		t.Errorf("a failed Save changed the existing file to %q", b)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("%d files left in the folder, want 1", len(ents))
	}
}

// TestTrainRefusesHugeEnsemble: 64 members of 4096×4096 (1.07·10⁹
// parameters, ≈ 34 GB with Adam's moments; each network alone is within
// MaxParams) are refused before any allocation, also when one member is
// trained.
func TestTrainRefusesHugeEnsemble(t *testing.T) {
	c := smallConfig()
	c.Hidden, c.Members, c.Epochs = []int{4096, 4096}, 64, 1
	for _, member := range []int{0, 3} {
		c.Member = member
		if _, err := Train(c, gridData(10, 1), nil); err == nil || !strings.Contains(err.Error(), "exceed") {
			t.Errorf("member %d: error %v", member, err)
		}
	}
}
