package wasm

import "fmt"

// maxJSONDepth bounds the nesting of any JSON a guest hands the host (a
// description, a report). A description needs 3 levels, a report rarely
// more than a few; without a bound a 1 MiB description nested 100 000
// deep made the strict key check allocate tens of gigabytes (its path
// strings grow with the depth) before encoding/json's own limit applied.
const maxJSONDepth = 64

// checkDepth scans b once, skipping strings, and refuses nesting deeper
// than max. It does not validate the JSON otherwise.
func checkDepth(b []byte, max int) error {
	depth, inStr, esc := 0, false, false
	for i, c := range b {
		switch {
		case inStr:
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
			}
		case c == '"':
			inStr = true
		case c == '{' || c == '[':
			if depth++; depth > max {
				return fmt.Errorf("JSON nested deeper than %d levels (at byte %d)", max, i)
			}
		case c == '}' || c == ']':
			depth--
		}
	}
	return nil
}
