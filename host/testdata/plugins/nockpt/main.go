// Command nockpt is a test method plugin: kinfer's builtin adaptive
// Metropolis sampler served through the Go SDK WITHOUT the checkpoint
// capability, for the host's tests of a method that cannot save its state
// (--checkpoint-every is refused, --resume after a stop says why it
// cannot continue).
//
// Build (repository root): go run ./cmd/kinfer build host/testdata/plugins/nockpt
package main

import (
	"github.com/kinfer/kinfer/builtin/methods/metropolis"
	"github.com/kinfer/kinfer/sdk/go/method"
)

func init() {
	spec := metropolis.Spec
	spec.Name = "nockpt"
	spec.Capabilities = nil
	method.ServeNew(spec, metropolis.New)
}

func main() {}
