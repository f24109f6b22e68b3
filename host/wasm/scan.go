package wasm

import "github.com/kinfer/kinfer/host/wasm/meter"

// scanModule reads a module's imports and memory limits before it is
// compiled (meter.Scan: one binary reader for the scan and the rewrite).
func scanModule(b []byte) (*meter.Info, error) { return meter.Scan(b) }
