// Package lsqtest is test support for kinfer's least-squares methods
// (levmar, gaussnewton): least-squares targets for the conformance host
// (Target, Box), a driver that serves init points as the kinfer host
// serves a study's init file (Drive), and the NIST StRD nonlinear
// regression runs (LoadNIST, RunNIST, LRE, NISTTable; CheckNIST and
// BenchNIST54, the test and benchmark of both methods) over the builtin nist
// model, scored by the log relative error of McCullough (1999, "Assessing
// the reliability of statistical software: Part II", The American
// Statistician 53(2):149–159); and Check, the tests both methods must pass
// (each with its known answer and provenance in its comment: the
// conformance problems, a linear fit's covariance against the normal
// equations in closed form, a rank-deficient Jacobian, failures, an exact
// fit, bounds, Rosenbrock, several starts, malformed results, determinism
// and resuming, the protocol), with Settings and Maker to build a method
// with its defaults but for the settings named. It is not built into the
// binary.
package lsqtest
