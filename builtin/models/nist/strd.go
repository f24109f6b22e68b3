package nist

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// Dataset is one NIST StRD nonlinear regression file (the format of
// testdata/*.dat, as NIST publishes it): the two starting points, the
// certified parameters with their standard deviations, the certified
// residual sum of squares, and the data.
type Dataset struct {
	Name        string
	Starts      [2][]float64 // start 1, start 2
	Certified   []float64    // certified b1 … bP
	CertifiedSE []float64    // their certified standard deviations
	RSS         float64      // certified residual sum of squares
	ResidualSD  float64      // certified residual standard deviation
	DOF         int          // degrees of freedom, as the file states
	N           int          // number of observations (from the header)
	Columns     []string     // the data columns: y, then the predictors
	Rows        [][]float64  // the data rows, N of them, in Columns order
}

// Size limits of a StRD file: NIST's largest (Hahn1) has 236 rows in
// 10 KB.
const (
	MaxFileBytes = 1 << 20
	MaxRows      = 10_000
)

// ParseStRD reads a StRD nonlinear regression file. It checks what the
// file states about itself: the number of observations equals the number
// of data rows, the degrees of freedom are n − P, and every row has one
// value per column. Errors name the line. The stated degrees of freedom
// are kept as stated: NIST's Rat43 file says 9 where n − P = 11 (its
// residual standard deviation is √(RSS/11)).
func ParseStRD(r io.Reader) (*Dataset, error) {
	sc := bufio.NewScanner(io.LimitReader(r, MaxFileBytes+1))
	sc.Buffer(make([]byte, 4096), 4096)
	d := &Dataset{}
	var starts [2][]float64
	inData := false
	line, bytes := 0, 0
	for sc.Scan() {
		line++
		text := strings.TrimRight(sc.Text(), "\r ")
		bytes += len(text) + 1
		if bytes > MaxFileBytes {
			return nil, fmt.Errorf("line %d: file larger than %d bytes", line, MaxFileBytes)
		}
		fields := strings.Fields(text)
		if inData {
			if len(fields) == 0 {
				continue
			}
			if len(fields) != len(d.Columns) {
				return nil, fmt.Errorf("line %d: %d values, want %d (%v)", line, len(fields), len(d.Columns), d.Columns)
			}
			if len(d.Rows) >= MaxRows {
				return nil, fmt.Errorf("line %d: more than %d data rows", line, MaxRows)
			}
			row := make([]float64, len(fields))
			for i, f := range fields {
				v, err := parseNum(f)
				if err != nil {
					return nil, fmt.Errorf("line %d: column %s: %v", line, d.Columns[i], err)
				}
				row[i] = v
			}
			d.Rows = append(d.Rows, row)
			continue
		}
		switch {
		case strings.HasPrefix(text, "Dataset Name:"):
			if len(fields) < 3 {
				return nil, fmt.Errorf("line %d: no dataset name", line)
			}
			d.Name = fields[2]
		case len(fields) >= 6 && fields[1] == "=" && strings.HasPrefix(fields[0], "b"):
			// "b1 =   500   250   2.3894212918E+02  2.7070075241E+00"
			k, err := strconv.Atoi(fields[0][1:])
			if err != nil || k != len(d.Certified)+1 {
				return nil, fmt.Errorf("line %d: parameter %q out of order", line, fields[0])
			}
			var v [4]float64
			for i := range v {
				if v[i], err = parseNum(fields[2+i]); err != nil {
					return nil, fmt.Errorf("line %d: %s: %v", line, fields[0], err)
				}
			}
			starts[0] = append(starts[0], v[0])
			starts[1] = append(starts[1], v[1])
			d.Certified = append(d.Certified, v[2])
			d.CertifiedSE = append(d.CertifiedSE, v[3])
		case strings.HasPrefix(text, "Residual Sum of Squares:"):
			v, err := lastNum(fields)
			if err != nil {
				return nil, fmt.Errorf("line %d: residual sum of squares: %v", line, err)
			}
			d.RSS = v
		case strings.HasPrefix(text, "Residual Standard Deviation:"):
			v, err := lastNum(fields)
			if err != nil {
				return nil, fmt.Errorf("line %d: residual standard deviation: %v", line, err)
			}
			d.ResidualSD = v
		case strings.HasPrefix(text, "Degrees of Freedom:"):
			v, err := lastNum(fields)
			if err != nil || v != math.Trunc(v) {
				return nil, fmt.Errorf("line %d: degrees of freedom: %v", line, err)
			}
			d.DOF = int(v)
		case strings.HasPrefix(text, "Number of Observations:"):
			v, err := lastNum(fields)
			if err != nil || v != math.Trunc(v) || v < 1 || v > MaxRows {
				return nil, fmt.Errorf("line %d: number of observations: %v", line, err)
			}
			d.N = int(v)
		case len(fields) >= 3 && fields[0] == "Data:" && fields[1] == "y":
			d.Columns = fields[1:]
			inData = true
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("line %d: %w", line+1, err)
	}
	switch {
	case d.Name == "":
		return nil, errors.New("no \"Dataset Name:\" line")
	case len(d.Certified) == 0:
		return nil, errors.New("no certified values (\"b1 = ...\" lines)")
	case !inData:
		return nil, errors.New("no data header (\"Data:   y   x\")")
	case len(d.Rows) != d.N:
		return nil, fmt.Errorf("%d data rows, the header says %d observations", len(d.Rows), d.N)
	}
	d.Starts = starts
	return d, nil
}

func parseNum(s string) (float64, error) {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a number", s)
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%q is not finite", s)
	}
	return v, nil
}

func lastNum(fields []string) (float64, error) {
	if len(fields) == 0 {
		return 0, errors.New("empty line")
	}
	return parseNum(fields[len(fields)-1])
}

// Conditions returns the model's conditions for the dataset, N×2
// row-major (x, x2; x2 = 0 for a one-predictor problem).
func (d *Dataset) Conditions() []float64 {
	out := make([]float64, 2*len(d.Rows))
	for k, row := range d.Rows {
		out[2*k] = row[1]
		if len(row) > 2 {
			out[2*k+1] = row[2]
		}
	}
	return out
}

// Response returns the observed response the model is fitted to: y, or
// log y for Nelson, whose certified fit is of log[y].
func (d *Dataset) Response() []float64 {
	out := make([]float64, len(d.Rows))
	for k, row := range d.Rows {
		out[k] = row[0]
		if d.Name == "Nelson" {
			out[k] = math.Log(row[0])
		}
	}
	return out
}

// Theta returns b (length ≤ MaxParams) padded with zeros to the model's
// MaxParams parameters.
func Theta(b []float64) []float64 {
	out := make([]float64, MaxParams)
	copy(out, b)
	return out
}
