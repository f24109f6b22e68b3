package guesttext

import (
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Escape returns s with invalid UTF-8 replaced by U+FFFD and every control
// character (U+0000–U+001F, U+007F, U+0080–U+009F) written as an escape:
// \n, \r and \t by name, the others as \xNN (\u00NN for C1); so are the
// bidirectional controls (U+061C, U+200E–U+200F, U+202A–U+202E,
// U+2066–U+2069), which reorder what a terminal shows, as \uNNNN. Printable
// text, including non-ASCII letters, is unchanged, so a clean message
// comes back identical (and without allocating).
func Escape(s string) string {
	if Clean(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			b.WriteRune(utf8.RuneError)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r >= 0x80 && r <= 0x9f || unicode.Is(unicode.Bidi_Control, r) || r == 0x2028 || r == 0x2029:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// Clean reports whether s is valid UTF-8 without control characters (nor
// bidirectional controls): whether Escape returns it unchanged. A check of
// untrusted text that must reach a terminal as it is.
func Clean(s string) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == 0x7f {
				return false
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && n <= 1) || (r >= 0x80 && r <= 0x9f) || unicode.Is(unicode.Bidi_Control, r) || r == 0x2028 || r == 0x2029 {
			return false
		}
		i += n
	}
	return true
}

// EscapeLines is Escape for a message of several lines: each line escaped,
// the line breaks kept. kinfer's own error messages quote file names and
// values from studies and manifests (a path in a "no such file" error);
// they reach the terminal through it (audit 10: an init path with an
// escape sequence retitled the terminal).
func EscapeLines(s string) string {
	if Clean(strings.ReplaceAll(s, "\n", "")) {
		return s
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = Escape(l)
	}
	return strings.Join(lines, "\n")
}

// Writer escapes, in what is written through it, what Escape escapes
// except line feed, tab and a carriage return that ends a line (CRLF): C0 and C1 control characters, DEL,
// bidirectional controls and invalid UTF-8 (a lone byte shown as \xNN). A
// command's standard output and report.html quote paths and names from
// run records and the command line, and no terminal escape must reach the
// terminal through them (audits 11, 12). Each Write is taken as whole
// runes (a rune split across two writes is shown as its bytes).
type Writer struct{ W io.Writer }

func (w Writer) Write(p []byte) (int, error) {
	if lineClean(p) {
		return w.W.Write(p)
	}
	var b strings.Builder
	for i := 0; i < len(p); {
		r, n := utf8.DecodeRune(p[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			fmt.Fprintf(&b, `\x%02x`, p[i])
		case r == '\n' || r == '\t':
			b.WriteRune(r)
		case r == '\r' && i+1 < len(p) && p[i+1] == '\n':
			b.WriteByte('\r') // a CRLF line end (a study saved on Windows, quoted in report.html)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r >= 0x80 && r <= 0x9f || unicode.Is(unicode.Bidi_Control, r) || r == 0x2028 || r == 0x2029:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.Write(p[i : i+n])
		}
		i += n
	}
	if _, err := io.WriteString(w.W, b.String()); err != nil {
		return 0, err
	}
	return len(p), nil
}

// lineClean reports whether p is valid UTF-8 whose only control
// characters are line feeds and tabs, without bidirectional controls.
func lineClean(p []byte) bool {
	for i := 0; i < len(p); {
		c := p[i]
		if c < utf8.RuneSelf {
			if c < 0x20 && c != '\n' && c != '\t' && !(c == '\r' && i+1 < len(p) && p[i+1] == '\n') || c == 0x7f {
				return false
			}
			i++
			continue
		}
		r, n := utf8.DecodeRune(p[i:])
		if r == utf8.RuneError && n <= 1 || r >= 0x80 && r <= 0x9f || unicode.Is(unicode.Bidi_Control, r) || r == 0x2028 || r == 0x2029 {
			return false
		}
		i += n
	}
	return true
}
