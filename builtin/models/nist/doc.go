// Package nist is the builtin model "nist": the 27 nonlinear regression
// problems of NIST's Statistical Reference Datasets (StRD; NIST
// Information Technology Laboratory, Statistical Engineering Division,
// https://www.itl.nist.gov/div898/strd/nls/nls_main.shtml, public domain),
// one of which the setting problem chooses, with an analytic Jacobian.
// They are the standard accuracy test of nonlinear least-squares software:
// each dataset comes with two starting points and certified values of the
// parameters, their standard deviations and the residual sum of squares,
// to 11 significant digits (McCullough 1999, "Assessing the reliability of
// statistical software: Part II", The American Statistician 53(2):149–159,
// scores results by the log relative error LRE = −log10(|est − cert|/|cert|)).
//
// The model's parameters are b1 … b9 (ENSO has nine; a problem with fewer
// ignores the rest, which a study fixes), its conditions x and x2 (only
// Nelson has a second predictor) and its output y — for Nelson log y,
// NIST's response for that dataset ("log[y] = b1 − b2·x1·exp(−b3·x2)").
// The formulas are those of the "Model:" lines of the NIST files; the
// references of each dataset are in its file.
//
// testdata/ holds the 27 NIST files (see testdata/README.md for where the
// copies come from and how they were cross-checked); ParseStRD reads them.
// The package's tests check the Jacobians against finite differences and
// that the certified parameters give the certified residual sum of squares;
// the levmar method's tests fit all 54 runs.
package nist
