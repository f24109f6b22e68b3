// Command arm is kinfer's builtin 5-DoF arm (builtin/models/arm: ABA
// forward dynamics, eight MuJoCo Hill muscles, 54 parameters) served as a
// WebAssembly plugin through the Go SDK, with its exact gradient (the VJP
// export, capability "vjp"), and the fused value-and-gradient pass
// (capability "pullback"). It is the plugin twin the Diff-MSM issue
// compares with the builtin: the same Adam trajectory through the ABI.
//
// Build (from the repository root):
//
//	go run ./cmd/kinfer build plugins/go/arm
package main

import (
	"slices"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/builtin/models/arm"
	"github.com/kinfer/kinfer/sdk/go/model"
)

func init() {
	spec := arm.Spec
	spec.Name = "arm-go"
	// Capability pullback (ABI.md §6.1): a gradient takes one forward
	// pass, whose per-row tape the host hands back to the backward pass
	// (abi.TapePullbacker, implemented by the builtin model).
	spec.Capabilities = append(slices.Clone(spec.Capabilities), abi.CapPullback)
	model.ServeNew(spec, arm.New)
}

func main() {}
