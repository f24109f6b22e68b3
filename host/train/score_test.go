package train

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kinfer/kinfer/builtin/models/surrogate"
	"github.com/kinfer/kinfer/builtin/surrogate/kriging"
	"github.com/kinfer/kinfer/builtin/surrogate/nn"
)

// Score on the validation design reproduces, bit for bit, the validation
// report that Train and TrainKriging computed while training (the same
// predictions through another path: the file written and read back); a
// design of another model, or with other outputs, is refused.
func TestScore(t *testing.T) {
	dir, vdir := t.TempDir(), t.TempDir()
	writeDesign(t, dir, 30)
	writeHeldOut(t, vdir, 12)
	ds, err := ReadDesign(dir)
	if err != nil {
		t.Fatal(err)
	}
	v, err := ReadDesign(vdir)
	if err != nil {
		t.Fatal(err)
	}
	cfg := nn.DefaultConfig()
	cfg.Hidden, cfg.Members, cfg.Epochs, cfg.Seed = []int{8}, 2, 3, 5
	e, prov, rep, err := Train(ds, Options{Config: cfg, Validation: v})
	if err != nil {
		t.Fatal(err)
	}
	nnPath := filepath.Join(t.TempDir(), "toy-nn.json")
	if err := Write(nnPath, e, prov, rep); err != nil {
		t.Fatal(err)
	}
	ms, kprov, krep, err := TrainKriging(ds, Options{Validation: v, Kriging: kriging.Options{Order: 1, Correlation: kriging.Gaussian}})
	if err != nil {
		t.Fatal(err)
	}
	kPath := filepath.Join(t.TempDir(), "toy-k.json")
	if err := WriteKriging(kPath, ms, kprov, krep); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path string
		want []OutputReport
	}{{nnPath, rep.Outputs}, {kPath, krep.Outputs}} {
		f := readSurrogate(t, c.path)
		got, err := Score(f, v)
		if err != nil {
			t.Fatalf("%s: %v", c.path, err)
		}
		if len(got) != len(c.want) {
			t.Fatalf("%s: %d outputs, want %d", c.path, len(got), len(c.want))
		}
		for j := range got {
			g, w := got[j], c.want[j]
			if g.Name != w.Name || g.Unit != w.Unit || math.Float64bits(g.MAE) != math.Float64bits(w.MAE) ||
				math.Float64bits(g.AE90) != math.Float64bits(w.AE90) || math.Float64bits(g.NMAE) != math.Float64bits(w.NMAE) {
				t.Errorf("%s output %d: score %+v, training report %+v", c.path, j, g, w)
			}
		}
		other := *v
		rec := *v.Record
		rec.Model = "other"
		other.Record = &rec
		if _, err := Score(f, &other); err == nil || !strings.Contains(err.Error(), "of model other") {
			t.Errorf("%s: a design of another model: %v", c.path, err)
		}
		other = *v
		other.OutNames = []string{"y0", "z"}
		if _, err := Score(f, &other); err == nil || !strings.Contains(err.Error(), "outputs [y0 z]") {
			t.Errorf("%s: a design with other outputs: %v", c.path, err)
		}
		// The training design is not held-out data: refused, alone or as
		// a part of merged designs.
		if _, err := Score(f, ds); err == nil || !strings.Contains(err.Error(), "trained on") {
			t.Errorf("%s: scored on its training design: %v", c.path, err)
		}
		if m, err := Merge(v, ds); err != nil {
			t.Fatal(err)
		} else if _, err := Score(f, m); err == nil || !strings.Contains(err.Error(), "trained on") {
			t.Errorf("%s: scored on its training design merged with another: %v", c.path, err)
		}
		// A shorter run of the same sequence over the same box (kinfer
		// design is deterministic: its points are the training design's
		// first 12) is not held out either.
		pdir := t.TempDir()
		writeDesign(t, pdir, 12)
		prefix, err := ReadDesign(pdir)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Score(f, prefix); err == nil || !strings.Contains(err.Error(), "has the first 12 points of the surrogate's training design") {
			t.Errorf("%s: scored on the training design's first points: %v", c.path, err)
		}
	}
	pdir := t.TempDir()
	writeDesign(t, pdir, 12)
	prefix, err := ReadDesign(pdir)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := Train(ds, Options{Config: cfg, Validation: prefix}); err == nil || !strings.Contains(err.Error(), "shares its first 12 points with the training design") {
		t.Errorf("Train validated on the training design's first points: %v", err)
	}
	// Nor is it a validation design, for either kind.
	if _, _, _, err := Train(ds, Options{Config: cfg, Validation: ds}); err == nil || !strings.Contains(err.Error(), "same design.csv") {
		t.Errorf("Train validated on its training design: %v", err)
	}
	if _, _, _, err := TrainKriging(ds, Options{Validation: ds}); err == nil || !strings.Contains(err.Error(), "same design.csv") {
		t.Errorf("TrainKriging validated on its training design: %v", err)
	}
}

func readSurrogate(t *testing.T, path string) *surrogate.File {
	t.Helper()
	f, err := surrogate.ReadFile(must(os.ReadFile(path)))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// A design's samples are counted against a memory budget as they are read
// (hostile 22: a forged design.csv of 25 million rows took score to 4 GB):
// a budget of exactly what the design's samples count for (twice their
// values and point indices) reads it, one byte less stops the read.
func TestReadDesignWithinBudget(t *testing.T) {
	dir := t.TempDir()
	writeDesign(t, dir, 30)
	full, err := ReadDesign(dir)
	if err != nil {
		t.Fatal(err)
	}
	need := 2 * int64(full.Data.N) * (int64(full.Data.In+full.Data.Out)*8 + designRowBytes)
	if _, err := ReadDesignWithin(dir, need); err != nil {
		t.Errorf("within %d bytes: %v", need, err)
	}
	if _, err := ReadDesignWithin(dir, need-1); !errors.Is(err, ErrDesignOverBudget) {
		t.Errorf("within %d bytes: %v", need-1, err)
	}
}
