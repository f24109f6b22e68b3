// Package testfunc holds analytic test functions with published optima,
// used to check and benchmark surrogates and optimisers (the Kriging
// tests and examples/kriging-hartmann6).
package testfunc
