package run

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/encoding"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/host/study"
)

// ParquetFile is the columnar copy of samples.csv (docs/OUTPUTS.md).
const ParquetFile = "samples.parquet"

// parquetRowGroup is the number of samples in one Parquet row group: the
// writer holds one group's columns in memory (8 bytes × columns × rows;
// 128 Ki rows of 12 columns are 12 MiB), and a reader can read a file
// group by group.
const parquetRowGroup = 1 << 17

// writeParquet writes samples.parquet atomically: the same columns as
// samples.csv, in the same order, as required DOUBLE columns, one row per
// sample, the values bit for bit (NaN, ±Inf and −0 included).
func writeParquet(path string, s *study.Study, extra []string, samples []abi.Sample) error {
	return WriteAtomic(path, func(w io.Writer) error {
		return encodeParquet(w, sampleColumns(s, extra), samples, parquetRowGroup)
	})
}

// sampleColumns are samples.csv's columns: the free parameters' names,
// then log_prior and log_likelihood, then the method's extra columns
// (abi.Report.Columns).
func sampleColumns(s *study.Study, extra []string) []string {
	cols := make([]string, 0, len(s.Free)+2+len(extra))
	for _, p := range s.Free {
		cols = append(cols, p.Name)
	}
	cols = append(cols, "log_prior", "log_likelihood")
	return append(cols, extra...)
}

// checkColumns refuses a method's extra columns (abi.Report.Columns) that
// are empty, repeated or a name samples.csv already has, or samples
// without one value per column.
func checkColumns(s *study.Study, extra []string, samples []abi.Sample) error {
	seen := map[string]bool{}
	for _, c := range sampleColumns(s, nil) {
		seen[c] = true
	}
	for _, c := range extra {
		if c == "" || seen[c] {
			return fmt.Errorf("report: extra sample column %q is empty or repeats a column of samples.csv", c)
		}
		seen[c] = true
	}
	for i, smp := range samples {
		if len(smp.Extra) != len(extra) {
			return fmt.Errorf("report: sample %d has %d extra values, want %d (%v)", i+1, len(smp.Extra), len(extra), extra)
		}
	}
	return nil
}

// parquetCodec is the page compression. Snappy: every Parquet reader
// (pyarrow, DuckDB, Spark, polars) reads it, it costs little to write, and
// MCMC chains' repeated values (rejected proposals) compress (measured in
// docs/PERFORMANCE.md, "samples.parquet").
var parquetCodec compress.Codec = &parquet.Snappy

// encodeParquet writes the samples to w as a Parquet file of one required
// DOUBLE column per name in cols (len(cols) = parameters + 2 + extra
// columns, the samples' len(Extra)), in groups of
// rowGroup rows, column by column.
func encodeParquet(w io.Writer, cols []string, samples []abi.Sample, rowGroup int) error {
	ne := 0 // extra columns (abi.Report.Columns)
	if len(samples) > 0 {
		ne = len(samples[0].Extra)
	}
	d := len(cols) - 2 - ne
	for i, smp := range samples {
		if len(smp.Theta) != d || len(smp.Extra) != ne {
			return fmt.Errorf("samples.parquet: sample %d has %d+%d values, want %d+%d", i+1, len(smp.Theta), len(smp.Extra), d, ne)
		}
	}
	schema := parquet.NewSchema("samples", newColumnsNode(cols))
	pw := parquet.NewWriter(w, schema,
		parquet.Compression(parquetCodec),
		parquet.CreatedBy("kinfer", Version, ""),
		parquet.MaxRowsPerRowGroup(int64(rowGroup)))
	buf := parquet.NewBuffer(schema)
	vals := make([]float64, min(rowGroup, len(samples)))
	for lo := 0; lo < len(samples); lo += rowGroup {
		part := samples[lo:min(lo+rowGroup, len(samples))]
		vals = vals[:len(part)]
		buf.Reset()
		for j, cb := range buf.ColumnBuffers() {
			for k, smp := range part {
				switch {
				case j < d:
					vals[k] = smp.Theta[j]
				case j == d:
					vals[k] = smp.LogPrior
				case j == d+1:
					vals[k] = smp.LogLik
				default:
					vals[k] = smp.Extra[j-d-2]
				}
			}
			dw, ok := cb.(parquet.DoubleWriter)
			if !ok {
				return fmt.Errorf("samples.parquet: column %q is not a DOUBLE buffer", cols[j])
			}
			if _, err := dw.WriteDoubles(vals); err != nil {
				return fmt.Errorf("samples.parquet: column %q: %w", cols[j], err)
			}
		}
		if _, err := pw.WriteRowGroup(buf); err != nil {
			return fmt.Errorf("samples.parquet: %w", err)
		}
	}
	if err := pw.Close(); err != nil {
		return fmt.Errorf("samples.parquet: %w", err)
	}
	return nil
}

// ReadParquet reads a samples.parquet: its column names in order and its
// columns (cols[j] has one value per sample). It refuses a file whose
// columns are not all required DOUBLE columns. It reads the whole file
// into memory.
func ReadParquet(path string) (names []string, cols [][]float64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	for _, fl := range pf.Schema().Fields() {
		if !fl.Leaf() || fl.Type().Kind() != parquet.Double || !fl.Required() {
			return nil, nil, fmt.Errorf("%s: column %q is not a required DOUBLE column (not a kinfer samples.parquet?)", path, fl.Name())
		}
		names = append(names, fl.Name())
	}
	cols = make([][]float64, len(names))
	for _, rg := range pf.RowGroups() {
		for j, cc := range rg.ColumnChunks() {
			pages := cc.Pages()
			for {
				p, err := pages.ReadPage()
				if err == io.EOF {
					break
				}
				if err != nil {
					pages.Close()
					return nil, nil, fmt.Errorf("%s: column %q: %w", path, names[j], err)
				}
				dr, ok := p.Values().(parquet.DoubleReader)
				if !ok {
					parquet.Release(p)
					pages.Close()
					return nil, nil, fmt.Errorf("%s: column %q: a page of %T, not DOUBLE values", path, names[j], p.Values())
				}
				v := make([]float64, p.NumValues())
				got, err := dr.ReadDoubles(v)
				parquet.Release(p)
				if err != nil && err != io.EOF {
					pages.Close()
					return nil, nil, fmt.Errorf("%s: column %q: %w", path, names[j], err)
				}
				cols[j] = append(cols[j], v[:got]...)
			}
			pages.Close()
		}
	}
	for j := range cols {
		if len(cols[j]) != int(pf.NumRows()) {
			return nil, nil, fmt.Errorf("%s: column %q has %d values, the file %d rows", path, names[j], len(cols[j]), pf.NumRows())
		}
	}
	return names, cols, nil
}

// columnsNode is a Parquet group whose columns keep their given order
// (parquet.Group, a map, sorts them by name): samples.parquet's columns
// are samples.csv's, in its order.
type columnsNode struct{ fields []parquet.Field }

func newColumnsNode(names []string) *columnsNode {
	leaf := parquet.Encoded(parquet.Leaf(parquet.DoubleType), &parquet.Plain)
	n := &columnsNode{fields: make([]parquet.Field, len(names))}
	for i, name := range names {
		n.fields[i] = &columnField{Node: leaf, name: name}
	}
	return n
}

func (n *columnsNode) ID() int { return 0 }
func (n *columnsNode) String() string {
	return fmt.Sprintf("group of %d DOUBLE columns", len(n.fields))
}
func (n *columnsNode) Type() parquet.Type          { return parquet.Group{}.Type() }
func (n *columnsNode) Optional() bool              { return false }
func (n *columnsNode) Repeated() bool              { return false }
func (n *columnsNode) Required() bool              { return true }
func (n *columnsNode) Leaf() bool                  { return false }
func (n *columnsNode) Fields() []parquet.Field     { return n.fields }
func (n *columnsNode) Encoding() encoding.Encoding { return nil }
func (n *columnsNode) Compression() compress.Codec { return nil }
func (n *columnsNode) GoType() reflect.Type {
	// A struct of float64s; the column names are in the tags (only a
	// writer of Go values would use it, which encodeParquet is not).
	fs := make([]reflect.StructField, len(n.fields))
	for i, f := range n.fields {
		fs[i] = reflect.StructField{Name: fmt.Sprintf("C%d", i), Type: reflect.TypeFor[float64](),
			Tag: reflect.StructTag(fmt.Sprintf("parquet:%q", f.Name()))}
	}
	return reflect.StructOf(fs)
}

// columnField is one named DOUBLE column of a columnsNode.
type columnField struct {
	parquet.Node
	name string
}

func (f *columnField) Name() string { return f.name }
func (f *columnField) Value(base reflect.Value) reflect.Value {
	if base.Kind() == reflect.Struct {
		for i := 0; i < base.NumField(); i++ {
			if base.Type().Field(i).Tag.Get("parquet") == f.name {
				return base.Field(i)
			}
		}
	}
	return reflect.Value{}
}

// parquetPath is samples.parquet beside samples.csv in dir.
func parquetPath(dir string) string { return filepath.Join(dir, ParquetFile) }
