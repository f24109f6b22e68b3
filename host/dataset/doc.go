// Package dataset reads a dataset: a CSV file with a header row, one row per
// condition, holding the model's condition columns, the observed output
// columns and optional per-value σ columns named "sigma_<output>". Empty
// cells and "NaN" in output columns mean "not observed". Errors name the
// file, the line and the column.
//
// A data file is untrusted input: it must be a regular file of at most
// MaxFileBytes, with lines of at most MaxLineBytes and at most MaxColumns
// columns, and its table may take at most MaxTableBytes of memory (a
// caller budgeting several files passes less). A UTF-8 byte-order mark is
// skipped; UTF-16 and tab- or semicolon-separated files are refused with a
// message saying so.
package dataset
