// Package sigfig chooses how many significant digits a table prints a
// row of numbers with: at least a fixed count, and more when the row's
// spread (a posterior's sd, a 5–95 % band) is small beside the numbers,
// so that 100000.23 ± 0.16 prints as 100000.23, not as 100000 (audit
// round 8: kinfer run, report.html and kinfer analyze printed a posterior
// mean, its percentiles and the truth all as "100000" or "1e+05").
package sigfig
