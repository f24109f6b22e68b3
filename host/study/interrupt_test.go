package study

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/host/wasm"
)

// With Options.Interrupt, cancelling it stops the plugin model and
// likelihood (their calls fail as interrupted) but not the plugin method,
// which can still be driven and save its state; a study is not loaded
// under an interrupt that is already cancelled.
func TestInterruptSparesTheMethod(t *testing.T) {
	ctx := context.Background()
	rt, err := wasm.NewRuntime(ctx, wasm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(ctx)
	const path = "../../examples/quickstart-plugins/study.toml"
	ictx, cancel := context.WithCancelCause(ctx)
	s, err := Load(ctx, path, Options{Workers: 1, Runtime: rt, Interrupt: ictx})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	cancel(errors.New("test interrupt"))
	y := make([]float64, s.Data[0].K*len(s.ModelInfo.Spec.Outputs))
	if st := s.Model.Eval(s.Base, s.Data[0].X, y); st == abi.OK {
		t.Fatal("the model still evaluates after the interrupt")
	}
	if f, ok := s.Model.(abi.Faulter); !ok || f.Fault() == nil || !strings.Contains(f.Fault().Error(), "interrupted") {
		t.Fatalf("model fault after the interrupt: %v", s.Model.(abi.Faulter).Fault())
	}
	if err := s.Method.Init(abi.Problem{Params: s.XParams, Seed: 1}); err != nil {
		t.Fatalf("method Init after the interrupt: %v", err)
	}
	if _, err := s.Method.Ask(); err != nil {
		t.Fatalf("method Ask after the interrupt: %v", err)
	}
	if _, err := s.Method.(abi.Checkpointer).SaveState(); err != nil {
		t.Fatalf("method SaveState after the interrupt: %v", err)
	}

	if _, err := Load(ctx, path, Options{Workers: 1, Runtime: rt, Interrupt: ictx}); err == nil || !strings.Contains(err.Error(), "test interrupt") {
		t.Fatalf("Load under a cancelled interrupt: %v", err)
	}
}
