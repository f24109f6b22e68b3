package study

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kinfer/kinfer/host/wasm"
)

// certify = true in a plugin's table checks its determinism on the study's
// own conditions before the run: a model whose outputs depend on its call
// history is refused, naming the key; a deterministic one loads.
func TestCertifyInStudy(t *testing.T) {
	for _, c := range []struct {
		module  string
		wantErr string
	}{{"model.wasm", ""}, {"stateful.wasm", "plugin quad is not deterministic: kinfer_model_eval at point"}} {
		dir := t.TempDir()
		bin, err := os.ReadFile(filepath.Join("..", "wasm", "testdata", c.module))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, "quad.wasm"), bin, 0o644)
		os.WriteFile(filepath.Join(dir, "plugin.toml"), []byte("name = \"quad\"\nversion = \"1\"\nkind = \"model\"\nabi = 1\nwasm = \"quad.wasm\"\n"), 0o644)
		os.WriteFile(filepath.Join(dir, "d.csv"), []byte("x,y1\n1,2\n2,3\n3,5\n"), 0o644)
		study := `name = "c"
seed = 4
[model]
plugin = "plugin.toml"
certify = true
[[data]]
name = "d"
file = "d.csv"
[[likelihood]]
use = "gaussian"
data = "d"
sigma = { y1 = 1.0 }
[prior]
a = { uniform = [-2.0, 2.0] }
b = { uniform = [-1.0, 1.0] }
[method]
use = "metropolis"
`
		p := filepath.Join(dir, "study.toml")
		os.WriteFile(p, []byte(study), 0o644)
		rt, err := wasm.NewRuntime(context.Background(), wasm.Options{CacheDir: "-"})
		if err != nil {
			t.Fatal(err)
		}
		s, err := Load(context.Background(), p, Options{Workers: 1, Runtime: rt})
		switch {
		case c.wantErr == "" && err != nil:
			t.Errorf("%s: %v", c.module, err)
		case c.wantErr != "":
			var nd *wasm.NondeterminismError
			if !errors.As(err, &nd) || !strings.Contains(err.Error(), c.wantErr) || !strings.Contains(err.Error(), `key "model.certify"`) {
				t.Errorf("%s: err = %v", c.module, err)
			}
		}
		if s != nil && c.wantErr == "" {
			// The run's outputs say so (summary.json certified).
			if len(s.Certified) != 1 || !strings.HasPrefix(s.Certified[0], "quad (model): kinfer_model_eval:") {
				t.Errorf("Certified %q", s.Certified)
			}
		}
		if s != nil {
			s.Close()
		}
		rt.Close(context.Background())
	}
}

// Certification runs two instances of the plugin: with a memory_mib above
// the default, they are charged to the memory budget before they run, and
// a study over it is refused naming the key (audit 8: refused for its
// budget only after certification had taken 2.9 GB).
func TestCertifyChargedToBudget(t *testing.T) {
	dir := t.TempDir()
	bin, err := os.ReadFile(filepath.Join("..", "wasm", "testdata", "model.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "quad.wasm"), bin, 0o644)
	os.WriteFile(filepath.Join(dir, "plugin.toml"), []byte("name = \"quad\"\nversion = \"1\"\nkind = \"model\"\nabi = 1\nwasm = \"quad.wasm\"\n[limits]\nmemory_mib = 4096\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "d.csv"), []byte("x,y1\n1,2\n2,3\n3,5\n"), 0o644)
	p := filepath.Join(dir, "study.toml")
	os.WriteFile(p, []byte("name = \"c\"\n[model]\nplugin = \"plugin.toml\"\ncertify = true\n[[data]]\nname = \"d\"\nfile = \"d.csv\"\n[[likelihood]]\nuse = \"gaussian\"\ndata = \"d\"\nsigma = { y1 = 1.0 }\n[prior]\na = { uniform = [-2.0, 2.0] }\nb = { uniform = [-1.0, 1.0] }\n[method]\nuse = \"metropolis\"\n"), 0o644)
	rt, err := wasm.NewRuntime(context.Background(), wasm.Options{CacheDir: "-"})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(context.Background())
	_, err = Load(context.Background(), p, Options{Workers: 1, Runtime: rt, MemoryBudget: 300 << 20})
	if err == nil || !strings.Contains(err.Error(), `key "model.certify"`) || !strings.Contains(err.Error(), "certifying plugin quad takes two instances of up to memory_mib 4096") {
		t.Errorf("err = %v", err)
	}
}
