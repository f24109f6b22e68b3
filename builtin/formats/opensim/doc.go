// Package opensim reads and writes the text files gait laboratories
// exchange through OpenSim (Delp et al. 2007, "OpenSim: open-source software
// to create and analyze dynamic simulations of movement", IEEE TBME 54(11)):
//
//   - Storage files, .sto and .mot (ground reactions, joint angles, any
//     time series): free header lines and key=value lines (version=,
//     nRows=, nColumns=, inDegrees=yes|no, DataType=, ...) up to a line
//     "endheader"; then one line of column labels, the first "time"; then
//     one row of numbers per time. Fields are read separated by tabs or
//     spaces and written separated by tabs.
//   - Marker files, .trc: line 1 "PathFileType 4 (X/Y/Z) <file>"; line 2 the
//     keys DataRate CameraRate NumFrames NumMarkers Units OrigDataRate
//     OrigDataStartFrame OrigNumFrames; line 3 their values; line 4
//     "Frame# Time" then each marker name followed by two empty fields;
//     line 5 "X1 Y1 Z1 X2 ..."; then one row per frame, tab-separated, a
//     missing marker being empty fields (read as NaN, written empty).
//
// No maintained Go reader exists for these formats; this one follows the
// layout OpenSim's own readers (STOFileAdapter, TRCFileAdapter) accept and
// its writers produce. Errors name the file and line: a bad header, a
// ragged row (fields not matching the labels), a number that does not
// parse, a label asked for but missing.
//
// The package depends only on the standard library, so both the host (which
// loads such files as study datasets) and built-in code may use it. Readers
// take an io.Reader; the caller bounds its size.
package opensim
