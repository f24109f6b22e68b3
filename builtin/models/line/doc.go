// Package line is a straight line y = a + b·x whose evaluation costs a set
// time: a test model for measuring the host's dispatch overhead and the
// speedup of parallel and remote evaluation (docs/PERFORMANCE.md) with a
// model of known cost, 1, 10 or 100 ms per evaluation.
//
// Parameters: intercept a and slope b. Condition: x. Output: y. Settings:
// cost_ms, the time one evaluation (of all the dataset's rows) takes
// (default 0), and wait, how that time passes: "spin" (the default) keeps
// a core busy, as a real model would; "sleep" leaves it idle, to measure
// dispatch with more workers than cores. The outputs do not depend on the
// cost, only the time does.
//
// Its Jacobian is exact: ∂y/∂a = 1, ∂y/∂b = x (an ordinary least-squares
// line; e.g. Draper & Smith 1998, Applied Regression Analysis, Eq. 1.2.1).
package line
