// Command mcprop is a test method plugin: kinfer's builtin montecarlo
// propagation served through the Go SDK with the capability propagation
// (ABI.md §6.5), for the host's tests that a plugin reading the model's
// outputs gives what the builtin gives. A plugin spec has no "output" key
// for a setting (ABI version 1, §4), so quantity is the output's index, a
// plain number.
//
// Build (repository root): go run ./cmd/kinfer build host/testdata/plugins/mcprop
package main

import (
	"github.com/kinfer/kinfer/builtin/methods/montecarlo"
	"github.com/kinfer/kinfer/sdk/go/method"
)

func init() {
	spec := montecarlo.Spec
	spec.Name = "mcprop"
	spec.Settings = append(spec.Settings[:0:0], spec.Settings...)
	for i := range spec.Settings {
		spec.Settings[i].Output = false
	}
	method.ServeNew(spec, montecarlo.New)
}

func main() {}
