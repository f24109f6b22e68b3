package run

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/host/study"
)

func loadQuickstart(t *testing.T) *study.Study {
	t.Helper()
	return loadExample(t, "quickstart")
}

func loadExample(t *testing.T, name string) *study.Study {
	t.Helper()
	s, err := study.Load(context.Background(), "../../examples/"+name+"/study.toml", study.Options{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// cancelAfter wraps a model and cancels the run's context after n
// evaluations: a run killed mid-way.
type cancelAfter struct {
	abi.Model
	n      int64
	count  atomic.Int64
	cancel context.CancelFunc
}

func (c *cancelAfter) Eval(theta, x, y []float64) abi.Status {
	if c.count.Add(1) == c.n {
		c.cancel()
	}
	return c.Model.Eval(theta, x, y)
}

func read(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Stopping a run mid-way and resuming it gives the same samples.csv, byte
// for byte, as an uninterrupted run with the same seed; both for a stop in
// the middle of a batch (the checkpoint written on the way out) and for a
// resume from the last periodic checkpoint.
func TestResumeGivesSameSamples(t *testing.T) {
	cases := []struct {
		example string
		stopAt  []int64         // evaluations after which the run is killed
		every   []time.Duration // checkpoint interval (-1: after every batch)
	}{
		// Metropolis: during the prior draws, in burn-in, while sampling.
		{"quickstart", []int64{3, 9001, 20003}, []time.Duration{0, -1, 0}},
		// TMCMC: in the prior population, in stage 1, in a late stage.
		{"quickstart-tmcmc", []int64{500, 30001, 120007}, []time.Duration{0, -1, 0}},
	}
	for _, c := range cases {
		straight := t.TempDir()
		if _, err := Run(context.Background(), loadExample(t, c.example), Options{OutDir: straight, Workers: 2}); err != nil {
			t.Fatal(err)
		}
		want := read(t, filepath.Join(straight, "samples.csv"))
		if _, err := os.Stat(filepath.Join(straight, CheckpointFile)); !os.IsNotExist(err) {
			t.Fatal("a complete run left its checkpoint")
		}
		for i, stopAt := range c.stopAt {
			dir := t.TempDir()
			ctx, cancel := context.WithCancel(context.Background())
			s := loadExample(t, c.example)
			s.Model = &cancelAfter{Model: s.Model, n: stopAt, cancel: cancel}
			sum, err := Run(ctx, s, Options{OutDir: dir, Workers: 2, CheckpointEvery: c.every[i]})
			if err == nil || sum.Complete || !strings.Contains(sum.Error, "context canceled") {
				t.Fatalf("%s stop at %d: want a cancelled run, got err %v", c.example, stopAt, err)
			}
			if _, err := os.Stat(filepath.Join(dir, CheckpointFile)); err != nil {
				t.Fatalf("%s stop at %d: no checkpoint: %v", c.example, stopAt, err)
			}
			sum2, err := Run(context.Background(), loadExample(t, c.example), Options{OutDir: dir, Workers: 1, Resume: true})
			if err != nil {
				t.Fatalf("%s: resume after %d: %v", c.example, stopAt, err)
			}
			if got := read(t, filepath.Join(dir, "samples.csv")); !bytes.Equal(got, want) {
				t.Errorf("%s stop at %d: resumed samples.csv differs from the uninterrupted run", c.example, stopAt)
			}
			if !bytes.Equal(read(t, filepath.Join(dir, ParquetFile)), read(t, filepath.Join(straight, ParquetFile))) {
				t.Errorf("%s stop at %d: resumed samples.parquet differs from the uninterrupted run", c.example, stopAt)
			}
			if !sum2.Complete || sum2.Samples == 0 {
				t.Errorf("%s stop at %d: resumed summary complete=%v samples=%d", c.example, stopAt, sum2.Complete, sum2.Samples)
			}
		}
	}
}

func TestResumeRefusesChangedStudy(t *testing.T) {
	dir := t.TempDir()
	src := read(t, "../../examples/quickstart/study.toml")
	os.WriteFile(filepath.Join(dir, "study.toml"), src, 0o644)
	os.WriteFile(filepath.Join(dir, "force_length.csv"), read(t, "../../examples/quickstart/force_length.csv"), 0o644)
	load := func() *study.Study {
		s, err := study.Load(context.Background(), filepath.Join(dir, "study.toml"), study.Options{Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := load()
	s.Model = &cancelAfter{Model: s.Model, n: 100, cancel: cancel}
	out := filepath.Join(dir, "out")
	Run(ctx, s, Options{OutDir: out, Workers: 1})
	before := read(t, filepath.Join(out, CheckpointFile))
	os.WriteFile(filepath.Join(dir, "study.toml"), bytes.Replace(src, []byte("samples = 5000"), []byte("samples = 6000"), 1), 0o644)
	_, err := Run(context.Background(), load(), Options{OutDir: out, Workers: 1, Resume: true})
	if err == nil || !strings.Contains(err.Error(), "changed since") {
		t.Fatalf("want refusal, got %v", err)
	}
	if !bytes.Equal(before, read(t, filepath.Join(out, CheckpointFile))) {
		t.Fatal("a refused resume overwrote the checkpoint")
	}
	// The same for a change of the data alone.
	os.WriteFile(filepath.Join(dir, "study.toml"), src, 0o644)
	data := read(t, filepath.Join(dir, "force_length.csv"))
	os.WriteFile(filepath.Join(dir, "force_length.csv"), append(data, []byte("33.1,600\n")...), 0o644)
	if _, err := Run(context.Background(), load(), Options{OutDir: out, Workers: 1, Resume: true}); err == nil || !strings.Contains(err.Error(), "changed since") {
		t.Fatalf("changed data: want refusal, got %v", err)
	}
}

// A method that cannot finish is stopped by MaxBatches with what it has.
func TestSummaryOfPartialRunIsValidJSON(t *testing.T) {
	dir := t.TempDir()
	s := loadQuickstart(t)
	_, err := Run(context.Background(), s, Options{OutDir: dir, Workers: 1, MaxBatches: 10})
	if err == nil || !strings.Contains(err.Error(), "did not finish within 10 batches") {
		t.Fatalf("got %v", err)
	}
	var m map[string]any
	if err := json.Unmarshal(read(t, filepath.Join(dir, "summary.json")), &m); err != nil {
		t.Fatal(err)
	}
	if m["complete"] != false || m["evaluations"].(float64) < 10 {
		t.Fatalf("summary %v", m)
	}
}

func TestJSONSafe(t *testing.T) {
	nan := 0.0
	nan = nan / nan
	b, err := json.Marshal(jsonSafe(map[string]any{"a": []float64{1, nan}, "b": map[string]any{"c": nan}}))
	if err != nil || string(b) != `{"a":[1,null],"b":{"c":null}}` {
		t.Fatalf("%s %v", b, err)
	}
	// Structs (montecarlo's report block is one: a quantity 0 in every
	// draw has a NaN coefficient of variation, which once failed the
	// whole summary.json): JSON names, "-", omitempty and embedded
	// fields as encoding/json has them; a struct without a non-finite
	// value keeps its own encoding (field order).
	type inner struct {
		X float64 `json:"x"`
		N int     `json:"n"`
	}
	type rep struct {
		inner
		CV    float64  `json:"cv_percent"`
		Skip  float64  `json:"-"`
		Empty string   `json:"empty,omitempty"`
		P     *float64 `json:"p"`
		Plain int
	}
	b, err = json.Marshal(jsonSafe(map[string]any{"m": rep{inner: inner{X: math.Inf(1), N: 4}, CV: nan, Skip: nan, P: &nan, Plain: 3}}))
	if err != nil || string(b) != `{"m":{"Plain":3,"cv_percent":null,"n":4,"p":null,"x":null}}` {
		t.Fatalf("struct: %s %v", b, err)
	}
	b, err = json.Marshal(jsonSafe(&rep{CV: 2, Plain: 1}))
	if err != nil || string(b) != `{"x":0,"n":0,"cv_percent":2,"p":null,"Plain":1}` {
		t.Fatalf("finite struct: %s %v", b, err)
	}
}
