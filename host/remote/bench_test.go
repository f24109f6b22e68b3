package remote

import (
	"context"
	"testing"
	"time"

	"github.com/kinfer/kinfer/abi"
)

// TestBatchLatency reports the round trip of small batches (a diagnostic).
func TestBatchLatency(t *testing.T) {
	if testing.Short() {
		t.Skip()
	}
	srv := startServer(t, t.TempDir(), 0)
	defer srv.Shutdown()
	cfg := testConfig(srv.ClientURL())
	goWorkers(t, cfg, "w", 2)
	s := load(t, "../../examples/quickstart-tmcmc/study.toml")
	c, err := Dial(context.Background(), cfg, s, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	pts := [][]float64{{5000, 0.1}, {5000, 0.1}, {5000, 0.1}, {5000, 0.1}}
	for i := 0; i < 5; i++ {
		c.Evaluate(context.Background(), pts, abi.WantLogTarget)
	}
	start := time.Now()
	const n = 50
	for i := 0; i < n; i++ {
		if _, _, err := c.Evaluate(context.Background(), pts, abi.WantLogTarget); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("batch of 4 points: %v per batch", time.Since(start)/n)
}
