package study

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzStudy: any study text, in a folder with small data files, either
// fails to load with an error naming the study (or a file it names), or
// loads into a consistent Study. Only built-in components resolve (no
// runtime is given, so a plugin is an error).
func FuzzStudy(f *testing.F) {
	dir := f.TempDir()
	files := map[string]string{
		"d.csv":      csv,
		"starts.csv": "k,eps_r\n5000,0.01\n6000,0.02\n",
		"bom.csv":    "\xEF\xBB\xBF" + csv,
		"ragged.csv": "length_mm,force_N\n29,10\n30\n",
		"tabs.csv":   "length_mm\tforce_N\n29\t10\n",
		"sig.csv":    "length_mm,force_N,sigma_force_N\n29,10,1\n30,50,\n31,120,2\n",
	}
	for _, src := range []string{"../../examples/quickstart/force_length.csv", "../../examples/knee-bpe/specimen1/kinematics.csv"} {
		if b, err := os.ReadFile(src); err == nil {
			files[filepath.Base(src)] = string(b)
		}
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			f.Fatal(err)
		}
	}
	for _, p := range []string{"../../examples/quickstart/study.toml", "../../examples/knee-bpe/specimen1/study.toml"} {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(string(b))
		}
	}
	f.Add(base)
	for _, s := range []string{
		strings.Replace(base, "seed = 3", "seed = 3\ninit = \"starts.csv\"", 1),
		strings.Replace(base, `file = "d.csv"`, `file = "bom.csv"`, 1),
		strings.Replace(base, `file = "d.csv"`, `file = "sig.csv"`, 1),
		strings.Replace(base, `file = "d.csv"`, `file = "ragged.csv"`, 1),
		strings.Replace(base, `file = "d.csv"`, `file = "tabs.csv"`, 1),
		strings.Replace(base, `file = "d.csv"`, `file = "/dev/zero"`, 1),
		strings.Replace(base, `use = "metropolis"`, `use = "adam"`, 1) + "\n[transform]\nk = { multiplier = 5000.0 }\neps_r = \"square\"\n",
		strings.Replace(base, "eps_r = { normal = [0.0, 0.1] }", "eps_r = { uniform = [nan, 0.1] }", 1),
		strings.Replace(base, "eps_r = { normal = [0.0, 0.1] }", "[fixed]\neps_r = 0.02", 1),
		strings.Replace(base, `sigma = { force_N = 5.0 }`, `sigma = 5`, 1) + "\n[[likelihood]]\nuse = \"gaussian\"\nsigma = inf\n",
		strings.Replace(base, "chains = 2", "chains = 100000\nsamples = 100000000", 1),
		strings.Replace(base, `use = "ligament"`, `plugin = "plugin.toml"`, 1),
		"name = \"x\"\n" + strings.Repeat("[", 20),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		p := filepath.Join(dir, "study.toml")
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := Load(context.Background(), p, Options{Workers: 1})
		if err != nil {
			if !strings.Contains(err.Error(), dir) {
				t.Fatalf("error names no file of the study: %v", err)
			}
			return
		}
		defer func() {
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
		}()
		spec := s.ModelInfo.Spec
		if s.Name == "" || len(s.Free) == 0 || len(s.FreeIdx) != len(s.Free) || len(s.Priors) != len(s.Free) ||
			len(s.XParams) != len(s.Free) || len(s.Base) != len(spec.Params) || s.Model == nil || s.Method == nil {
			t.Fatalf("study %q: %d free, %d idx, %d priors, %d x, %d base for %d params",
				s.Name, len(s.Free), len(s.FreeIdx), len(s.Priors), len(s.XParams), len(s.Base), len(spec.Params))
		}
		for i, q := range s.Free {
			if !(q.Lower < q.Upper) || s.FreeIdx[i] < 0 || s.FreeIdx[i] >= len(spec.Params) {
				t.Fatalf("free %s: [%g, %g], index %d", q.Name, q.Lower, q.Upper, s.FreeIdx[i])
			}
		}
		for _, st := range s.Starts {
			if len(st) != len(s.Free) {
				t.Fatalf("start %v", st)
			}
			for j, v := range st {
				if !(v >= s.Free[j].Lower && v <= s.Free[j].Upper) {
					t.Fatalf("start %v outside %s's bounds", st, s.Free[j].Name)
				}
			}
		}
		if len(s.Data) == 0 || len(s.Terms) == 0 {
			t.Fatalf("%d datasets, %d terms", len(s.Data), len(s.Terms))
		}
		for _, ds := range s.Data {
			if ds.K < 1 || len(ds.X) != ds.K*len(spec.Conditions) {
				t.Fatalf("dataset %s: K=%d, %d conditions", ds.Name, ds.K, len(ds.X))
			}
			for _, x := range ds.X {
				if math.IsNaN(x) || math.IsInf(x, 0) {
					t.Fatalf("dataset %s: condition %g", ds.Name, x)
				}
			}
		}
		for _, tm := range s.Terms {
			n := tm.Data.K * len(tm.Outputs)
			if len(tm.Outputs) == 0 || len(tm.Obs) != n || len(tm.Sigma) != n || len(tm.OutIdx) != len(tm.Outputs) || tm.Likelihood == nil {
				t.Fatalf("term %s: %d outputs, %d obs, %d σ", tm.Name, len(tm.Outputs), len(tm.Obs), len(tm.Sigma))
			}
			for _, j := range tm.OutIdx {
				if j < 0 || j >= len(spec.Outputs) {
					t.Fatalf("term %s: output index %d", tm.Name, j)
				}
			}
			for i, sg := range tm.Sigma {
				if !math.IsNaN(sg) && !(sg > 0 && !math.IsInf(sg, 0)) {
					t.Fatalf("term %s: σ %g", tm.Name, sg)
				}
				if math.IsNaN(sg) && !math.IsNaN(tm.Obs[i]) && !tm.Component.Spec.Has("sigma_free") {
					t.Fatalf("term %s: observation %d without σ", tm.Name, i)
				}
			}
		}
	})
}
