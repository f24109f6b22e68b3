package run

import (
	"bytes"
	"context"
	"encoding/csv"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/kinfer/kinfer/abi"
)

// sameFloat is bit equality (NaN payloads, −0 and +0 apart).
func sameFloat(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }

// checkParquet reads path and compares it with cols and samples bit for bit.
func checkParquet(t *testing.T, path string, cols []string, samples []abi.Sample) {
	t.Helper()
	names, got, err := ReadParquet(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(names) != len(cols) {
		t.Fatalf("columns %q, want %q", names, cols)
	}
	for j := range cols {
		if names[j] != cols[j] {
			t.Fatalf("column %d is %q, want %q (order kept)", j, names[j], cols[j])
		}
		if len(got[j]) != len(samples) {
			t.Fatalf("column %q has %d values, want %d", cols[j], len(got[j]), len(samples))
		}
	}
	for k, s := range samples {
		want := append(append([]float64{}, s.Theta...), s.LogPrior, s.LogLik)
		for j := range want {
			if !sameFloat(got[j][k], want[j]) {
				t.Fatalf("row %d column %q: %v (%#x), want %v (%#x)", k, cols[j], got[j][k], math.Float64bits(got[j][k]), want[j], math.Float64bits(want[j]))
			}
		}
	}
}

// encodeParquet keeps every float64 bit for bit (NaN, ±Inf, −0,
// subnormals, MaxFloat64), the column order (not sorted: "z" first) and
// names that need quoting in CSV, across several row groups.
func TestParquetRoundTrip(t *testing.T) {
	cols := []string{"z", `b,"quoted"`, "a", "log_prior", "log_likelihood"}
	samples := randomSamples(1000, 3)
	path := filepath.Join(t.TempDir(), ParquetFile)
	f, _ := os.Create(path)
	if err := encodeParquet(f, cols, samples, 300); err != nil {
		t.Fatal(err)
	}
	f.Close()
	checkParquet(t, path, cols, samples)
}

// No samples (a stopped run of a method that reports at the end): a valid
// file with the columns and no rows.
func TestParquetEmpty(t *testing.T) {
	cols := []string{"a", "log_prior", "log_likelihood"}
	path := filepath.Join(t.TempDir(), ParquetFile)
	f, _ := os.Create(path)
	if err := encodeParquet(f, cols, nil, parquetRowGroup); err != nil {
		t.Fatal(err)
	}
	f.Close()
	checkParquet(t, path, cols, nil)
}

// The file is a function of the samples: the same samples give the same
// bytes (kinfer run --verify and resumed runs rely on deterministic outputs).
func TestParquetDeterministic(t *testing.T) {
	cols := []string{"a", "b", "c", "log_prior", "log_likelihood"}
	samples := randomSamples(2000, 3)
	var b1, b2 bytes.Buffer
	if err := encodeParquet(&b1, cols, samples, 700); err != nil {
		t.Fatal(err)
	}
	if err := encodeParquet(&b2, cols, samples, 700); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b1.Bytes(), b2.Bytes()) {
		t.Fatal("two encodings of the same samples differ")
	}
}

// A sample of the wrong length is an error, not a short column.
func TestParquetRefusesRaggedSample(t *testing.T) {
	cols := []string{"a", "b", "log_prior", "log_likelihood"}
	samples := []abi.Sample{{Theta: []float64{1, 2}}, {Theta: []float64{1}}}
	if err := encodeParquet(&bytes.Buffer{}, cols, samples, 10); err == nil {
		t.Fatal("a sample of 1 value in a 2-parameter file was accepted")
	}
}

// BenchmarkWriteSamples: 1e6 samples of 10 parameters written as
// samples.csv and as samples.parquet (docs/PERFORMANCE.md, "samples.parquet").
// Run with -benchtime=1x: one write is already a second.
func BenchmarkWriteSamples(b *testing.B) {
	cols := []string{"p0", "p1", "p2", "p3", "p4", "p5", "p6", "p7", "p8", "p9", "log_prior", "log_likelihood"}
	n := 1_000_000
	if testing.Short() {
		n = 10_000
	}
	samples := randomSamples(n, 10)
	dir := b.TempDir()
	b.Run("csv", func(b *testing.B) {
		for range b.N {
			if err := WriteAtomic(filepath.Join(dir, "samples.csv"), func(w io.Writer) error { return encodeSamples(w, cols, samples) }); err != nil {
				b.Fatal(err)
			}
		}
		st, _ := os.Stat(filepath.Join(dir, "samples.csv"))
		b.ReportMetric(float64(st.Size())/1e6, "MB")
	})
	b.Run("parquet", func(b *testing.B) {
		for range b.N {
			if err := WriteAtomic(filepath.Join(dir, ParquetFile), func(w io.Writer) error { return encodeParquet(w, cols, samples, parquetRowGroup) }); err != nil {
				b.Fatal(err)
			}
		}
		st, _ := os.Stat(filepath.Join(dir, ParquetFile))
		b.ReportMetric(float64(st.Size())/1e6, "MB")
	})
}

// checkParquetMatchesCSV reads dir's samples.csv (strconv.ParseFloat of
// each field: the shortest form reads back exactly) and samples.parquet
// and compares them column by column, bit for bit.
func checkParquetMatchesCSV(t *testing.T, dir string) {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "samples.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	names, cols, err := ReadParquet(filepath.Join(dir, ParquetFile))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(names, recs[0]) {
		t.Fatalf("samples.parquet columns %q, samples.csv %q", names, recs[0])
	}
	if len(cols[0]) != len(recs)-1 {
		t.Fatalf("samples.parquet has %d rows, samples.csv %d", len(cols[0]), len(recs)-1)
	}
	for i, rec := range recs[1:] {
		for j, field := range rec {
			v, err := strconv.ParseFloat(field, 64)
			if err != nil {
				t.Fatal(err)
			}
			if !sameFloat(v, cols[j][i]) && !(math.IsNaN(v) && math.IsNaN(cols[j][i])) {
				t.Fatalf("row %d column %q: samples.csv %s, samples.parquet %v", i+1, names[j], field, cols[j][i])
			}
		}
	}
}

// A complete run writes samples.parquet beside samples.csv with the same
// columns and values: Metropolis (streamed samples, 4 chains) and TMCMC
// (reported at the end) on the ligament quickstarts.
func TestRunWritesParquet(t *testing.T) {
	for _, ex := range []string{"quickstart", "quickstart-tmcmc"} {
		dir := t.TempDir()
		s := loadExample(t, ex)
		sum, err := Run(context.Background(), s, Options{OutDir: dir, Workers: 2})
		s.Close()
		if err != nil {
			t.Fatal(err)
		}
		if sum.Samples < 1000 {
			t.Fatalf("%s: %d samples", ex, sum.Samples)
		}
		checkParquetMatchesCSV(t, dir)
	}
}

// ReadParquet refuses what is not a kinfer samples file: a Parquet file
// with an INT64 column, and bytes that are not Parquet.
func TestReadParquetRefusesOtherFiles(t *testing.T) {
	dir := t.TempDir()
	type row struct {
		A int64 `parquet:"a"`
	}
	p := filepath.Join(dir, "ints.parquet")
	if err := parquet.WriteFile(p, []row{{1}, {2}}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ReadParquet(p); err == nil || !strings.Contains(err.Error(), "not a required DOUBLE column") {
		t.Errorf("INT64 column: %v", err)
	}
	g := filepath.Join(dir, "garbage.parquet")
	os.WriteFile(g, []byte("a,b\n1,2\n"), 0o644)
	if _, _, err := ReadParquet(g); err == nil {
		t.Error("a CSV file read as Parquet")
	}
}
