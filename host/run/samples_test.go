package run

import (
	"bytes"
	"encoding/csv"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/kinfer/kinfer/abi"
)

// csvReference is samples.csv as encoding/csv writes it, field by field
// (the writer encodeSamples replaced): the independent reference.
func csvReference(cols []string, samples []abi.Sample) []byte {
	var b bytes.Buffer
	cw := csv.NewWriter(&b)
	cw.Write(cols)
	for _, s := range samples {
		var rec []string
		for _, v := range append(append([]float64{}, s.Theta...), s.LogPrior, s.LogLik) {
			rec = append(rec, strconv.FormatFloat(v, 'g', -1, 64))
		}
		cw.Write(rec)
	}
	cw.Flush()
	return b.Bytes()
}

func randomSamples(n, d int) []abi.Sample {
	rng := rand.New(rand.NewPCG(3, 4))
	special := []float64{math.NaN(), math.Inf(1), math.Inf(-1), 0, math.Copysign(0, -1), 1e-310, math.MaxFloat64}
	out := make([]abi.Sample, n)
	for k := range out {
		th := make([]float64, d)
		for i := range th {
			th[i] = rng.NormFloat64() * math.Pow(10, float64(rng.IntN(40)-20))
			if rng.IntN(20) == 0 {
				th[i] = special[rng.IntN(len(special))]
			}
		}
		out[k] = abi.Sample{Theta: th, LogPrior: -rng.Float64(), LogLik: math.Inf(-1)}
	}
	return out
}

// encodeSamples writes exactly what encoding/csv writes, also for NaN,
// ±Inf, −0, subnormals and a header that needs quoting.
func TestEncodeSamplesMatchesCSV(t *testing.T) {
	cols := []string{"a", `b,"quoted"`, "c", "log_prior", "log_likelihood"}
	samples := randomSamples(500, 3)
	var got bytes.Buffer
	if err := encodeSamples(&got, cols, samples); err != nil {
		t.Fatal(err)
	}
	if want := csvReference(cols, samples); !bytes.Equal(got.Bytes(), want) {
		t.Fatalf("encodeSamples differs from encoding/csv:\n%q\nwant\n%q", got.Bytes()[:200], want[:200])
	}
}

// BenchmarkEncodeSamples: 10 000 samples of 10 parameters, against the
// csv.Writer reference (docs/PERFORMANCE.md).
func BenchmarkEncodeSamples(b *testing.B) {
	cols := []string{"p0", "p1", "p2", "p3", "p4", "p5", "p6", "p7", "p8", "p9", "log_prior", "log_likelihood"}
	samples := randomSamples(10000, 10)
	b.Run("append", func(b *testing.B) {
		for range b.N {
			var w bytes.Buffer
			encodeSamples(&w, cols, samples)
		}
	})
	b.Run("csv.Writer", func(b *testing.B) {
		for range b.N {
			csvReference(cols, samples)
		}
	})
}
