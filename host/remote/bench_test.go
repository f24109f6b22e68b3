package remote

import (
	"context"
	"testing"

	"github.com/kinfer/kinfer/abi"
)

// BenchmarkBatchRoundTrip is one batch of 4 cheap points (the ligament)
// through an embedded server and two in-process workers: the latency a
// method with small batches pays per batch.
func BenchmarkBatchRoundTrip(b *testing.B) {
	srv := startServer(b, b.TempDir(), 0)
	defer srv.Shutdown()
	cfg := testConfig(srv.ClientURL())
	goWorkers(b, cfg, "w", 2)
	s := load(b, "../../examples/quickstart-tmcmc/study.toml")
	c, err := Dial(context.Background(), cfg, s, nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	pts := [][]float64{{5000, 0.1}, {5000, 0.1}, {5000, 0.1}, {5000, 0.1}}
	c.Evaluate(context.Background(), pts, abi.WantLogTarget)
	b.ResetTimer()
	for b.Loop() {
		if _, _, err := c.Evaluate(context.Background(), pts, abi.WantLogTarget); err != nil {
			b.Fatal(err)
		}
	}
}

func benchResults() []abi.Result {
	res := make([]abi.Result, 64)
	for i := range res {
		res[i] = abi.Result{Theta: make([]float64, 50), LogPrior: -1, LogLik: -2, Grad: make([]float64, 50)}
	}
	return res
}

// BenchmarkEncodeResults encodes a chunk of 64 results of 50 parameters
// with gradients (the worker's side of every chunk).
func BenchmarkEncodeResults(b *testing.B) {
	res := benchResults()
	for b.Loop() {
		encodeResults(res, 0, 0, 0)
	}
}

// BenchmarkDecodeResults decodes it (the run's side).
func BenchmarkDecodeResults(b *testing.B) {
	body := encodeResults(benchResults(), 0, 0, 0)
	for b.Loop() {
		if _, _, _, err := decodeResults(body, 0); err != nil {
			b.Fatal(err)
		}
	}
}
