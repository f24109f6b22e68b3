package plainfloat

import (
	"errors"
	"strconv"
	"strings"
)

// Parse reads a decimal floating-point number as a spreadsheet or a CSV
// reader would: strconv.ParseFloat, without the Go-literal forms it also
// accepts — underscores between digits ("2_9" was read as 29) and
// hexadecimal mantissas ("0x1p3" was read as 8) — which no data file
// means as numbers (audit 5). "NaN", "Inf" and "Infinity" (any case,
// signed) are kept.
func Parse(s string) (float64, error) {
	if strings.IndexByte(s, '_') >= 0 {
		return 0, errors.New("an underscore in a number")
	}
	t := strings.TrimLeft(s, "+-")
	if len(t) > 1 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X') {
		return 0, errors.New("a hexadecimal number")
	}
	return strconv.ParseFloat(s, 64)
}
