package run

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// DuckDB, an independent Parquet reader, reads a run's samples.parquet:
// the same column names in order, every column DOUBLE, and every value
// the float64 of samples.csv's field, bit for bit. DuckDB comes from npm
// (@duckdb/node-api, which ships DuckDB's engine); the test runs when
// KINFER_DUCKDB_NODE_MODULES names the node_modules folder it is installed
// in (.ci/run installs it) and is skipped otherwise. Debian (bookworm) has
// no python3-pyarrow or fastparquet, so pandas cannot read Parquet there.
func TestDuckDBReadsParquet(t *testing.T) {
	mods := os.Getenv("KINFER_DUCKDB_NODE_MODULES")
	if mods == "" {
		t.Skip("KINFER_DUCKDB_NODE_MODULES is not set (npm install @duckdb/node-api into a folder and name its node_modules)")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("no node")
	}
	dir := t.TempDir()
	s := loadExample(t, "quickstart")
	if _, err := Run(context.Background(), s, Options{OutDir: dir, Workers: 2}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	script, _ := filepath.Abs("testdata/duckdb_read.cjs")
	cmd := exec.Command(node, script, filepath.Join(dir, ParquetFile))
	cmd.Env = append(os.Environ(), "NODE_PATH="+mods)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("duckdb: %v", err)
	}
	var got struct {
		Columns []struct{ Name, Type string }
		Rows    [][]string
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(dir, "samples.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Columns) != len(recs[0]) {
		t.Fatalf("DuckDB sees %d columns, samples.csv has %q", len(got.Columns), recs[0])
	}
	for j, c := range got.Columns {
		if c.Name != recs[0][j] || c.Type != "DOUBLE" {
			t.Fatalf("DuckDB column %d is %s %s, want %s DOUBLE", j, c.Name, c.Type, recs[0][j])
		}
	}
	if len(got.Rows) != len(recs)-1 || len(got.Rows) < 1000 {
		t.Fatalf("DuckDB reads %d rows, samples.csv has %d", len(got.Rows), len(recs)-1)
	}
	for i, row := range got.Rows {
		for j, h := range row {
			bits, err := strconv.ParseUint(h, 16, 64)
			if err != nil {
				t.Fatal(err)
			}
			want, err := strconv.ParseFloat(recs[i+1][j], 64)
			if err != nil {
				t.Fatal(err)
			}
			if v := math.Float64frombits(bits); !sameFloat(v, want) && !(math.IsNaN(v) && math.IsNaN(want)) {
				t.Fatalf("row %d column %s: DuckDB %v, samples.csv %s", i+1, recs[0][j], v, recs[i+1][j])
			}
		}
	}
	t.Logf("DuckDB read %d rows × %d columns, equal to samples.csv bit for bit", len(got.Rows), len(got.Columns))
}
