package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/kinfer/kinfer/host/remote"
)

func TestWorkerHelp(t *testing.T) {
	code, out, _ := kinfer(t, "worker", "--help")
	if code != 0 || !strings.Contains(out, "-nats") || !strings.Contains(out, "-workers") {
		t.Fatalf("worker --help: %d %s", code, out)
	}
	if code, _, e := kinfer(t, "worker"); code != 2 || !strings.Contains(e, "--nats URL is required") {
		t.Fatalf("worker without --nats: %d %s", code, e)
	}
	for _, args := range [][]string{
		{"worker", "--nats", "nats://127.0.0.1:1", "--ack-wait", "2ns"},
		{"worker", "--nats", "nats://127.0.0.1:1", "--max-deliver", "-1"},
		{"worker", "--nats", "nats://127.0.0.1:1", "--max-file-bytes", "0"},
		{"run", "x.toml", "--nats", "nats://127.0.0.1:1", "--ack-wait", "1ns"},
	} {
		if code, _, e := kinfer(t, args...); code != 2 || !strings.Contains(e, "must be") {
			t.Errorf("%v: %d %s, want a usage error", args, code, e)
		}
	}
	if code, out, _ := kinfer(t, "run", "--help"); code != 0 || !strings.Contains(out, "-nats") {
		t.Fatalf("run --help lacks --nats: %s", out)
	}
}

// kinfer run --nats URL with two workers on an embedded server writes the
// samples.csv of a local run, and says in summary.json who evaluated.
func TestRunNats(t *testing.T) {
	s, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(), NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	go s.Start()
	defer s.Shutdown()
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("server not ready")
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		remote.Work(ctx, remote.Config{URL: s.ClientURL()}, remote.WorkerOptions{Slots: 2, CacheDir: t.TempDir(), ID: "cli-worker"})
	}()
	defer func() { cancel(); <-done }()
	local, far := t.TempDir(), t.TempDir()
	// The TMCMC quickstart, smaller.
	dir := t.TempDir()
	text := strings.NewReplacer("chains = 1000", "chains = 200", "substeps = 20", "substeps = 4", "../quickstart/", "").Replace(string(mustRead(t, "../../examples/quickstart-tmcmc/study.toml")))
	os.WriteFile(filepath.Join(dir, "study.toml"), []byte(text), 0o644)
	os.WriteFile(filepath.Join(dir, "force_length.csv"), mustRead(t, "../../examples/quickstart/force_length.csv"), 0o644)
	study := filepath.Join(dir, "study.toml")
	if code, o, e := kinfer(t, "run", study, "-o", local); code != 0 {
		t.Fatal(o, e)
	}
	if code, o, e := kinfer(t, "run", study, "-o", far, "--nats", s.ClientURL()); code != 0 {
		t.Fatal(o, e)
	}
	a, _ := os.ReadFile(filepath.Join(local, "samples.csv"))
	b, _ := os.ReadFile(filepath.Join(far, "samples.csv"))
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Fatal("samples.csv of the remote run differs from the local one")
	}
	var sum struct {
		Remote struct {
			Server  string `json:"server"`
			Workers int    `json:"workers"`
			Results int    `json:"results"`
		} `json:"remote"`
		Evaluations int `json:"evaluations"`
	}
	data, _ := os.ReadFile(filepath.Join(far, "summary.json"))
	json.Unmarshal(data, &sum)
	if sum.Remote.Server == "" || sum.Remote.Workers < 1 || sum.Remote.Results < sum.Evaluations {
		t.Fatalf("summary.json remote: %+v, evaluations %d", sum.Remote, sum.Evaluations)
	}
}
