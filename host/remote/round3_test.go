package remote

// Regression tests of the third (hostile-input) audit of distributed
// runs: a relative worker cache, a server with a small max_payload, a
// server that refuses the run's chunks, and workers whose own policy
// refuses a run while others could take it.

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/host/wasm"
)

// A worker started with a relative cache directory (kinfer worker --cache
// ./wcache) evaluates runs: its bundle tree used to stay relative while
// the study's inputs are absolute, so every file looked unpinned and every
// chunk was refused.
func TestWorkerRelativeCache(t *testing.T) {
	path, err := filepath.Abs("../../examples/quickstart-tmcmc/study.toml")
	if err != nil {
		t.Fatal(err)
	}
	s := load(t, path)
	srv := startServer(t, t.TempDir(), 0)
	defer srv.Shutdown()
	cfg := testConfig(srv.ClientURL())
	t.Chdir(t.TempDir())
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		if err := Work(ctx, cfg, WorkerOptions{Slots: 1, CacheDir: "wcache", Runtime: wasm.Options{CacheDir: compiled}}); err != nil {
			t.Error(err)
		}
	}()
	defer func() { cancel(); <-stopped }()
	c, err := Dial(context.Background(), cfg, s, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	res, _, err := c.Evaluate(context.Background(), [][]float64{{5000, 0.1}, {6000, 0.05}}, abi.WantLogTarget)
	if err != nil || len(res) != 2 || res[0].Status != abi.OK {
		t.Fatalf("worker with a relative cache: %v %v", res, err)
	}
}
