// Package guesttext makes text that comes from a plugin (a guest) safe to
// print on a terminal or to put into an error: kinfer_last_error messages,
// a plugin's stdout/stderr lines and its kinfer_v1 log lines (ABI.md §3,
// §7). Plugins may be untrusted (ABI.md §8); without escaping, a guest
// could colour, clear or move the user's cursor with ESC sequences, or
// forge lines that look like kinfer's own with CR or newline.
//
// Escape is the one helper every place that prints guest text uses: it
// repairs invalid UTF-8 (U+FFFD) and writes every control character
// (C0, DEL and C1) as a visible escape — \n, \r, \t, \x1b — so that a
// guest's line stays one line.
package guesttext
