// Package abi holds kinfer's contracts: the Go interfaces that models,
// likelihoods and methods (samplers and optimisers) implement, the spec types
// that describe them, the status codes, and the constants of the binary
// WebAssembly ABI. ABI.md in this directory is the normative text of ABI v1.
//
// The package is a stdlib-only leaf: every other kinfer package imports it
// and it imports none of them, so that plugin SDKs and third-party code can
// depend on it without pulling in the host or its dependencies.
//
// Sources: kinfer's four contracts (README.md, RATIONALE.md "ABI and contracts").
package abi
