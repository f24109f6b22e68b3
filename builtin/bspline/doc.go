// Package bspline is a B-spline basis: n basis functions of degree p on a
// clamped (open) uniform knot vector over [a, b], their values and
// derivatives at a point, and the K×n design matrix of a set of points.
//
// The basis follows the Cox–de Boor recursion (de Boor 1978, "A Practical
// Guide to Splines", Springer, Ch. IX, Eq. (IX.14) for the values and
// (X.12) for derivatives):
//
//	B_{i,0}(x) = 1 if t_i ≤ x < t_{i+1}, else 0
//	B_{i,p}(x) = (x − t_i)/(t_{i+p} − t_i)·B_{i,p−1}(x) + (t_{i+p+1} − x)/(t_{i+p+1} − t_{i+1})·B_{i+1,p−1}(x)
//	B'_{i,p}(x) = p/(t_{i+p} − t_i)·B_{i,p−1}(x) − p/(t_{i+p+1} − t_{i+1})·B_{i+1,p−1}(x)
//
// (a term with a zero denominator is 0). The clamped knot vector repeats a
// and b p+1 times, so a curve starts at its first coefficient and ends at
// its last. Jackson et al. (2016, "Development of a subject-specific
// foot-ground contact model for walking", J. Biomech. Eng. 138(9)) add
// B-spline deviation curves with 25 coefficients to each measured joint
// trajectory; this package gives those curves.
package bspline
