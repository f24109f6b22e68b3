package tomlx

import (
	"fmt"
	"strings"
)

// Bounds on a TOML file, checked before it is decoded. Studies and plugin
// manifests are a few kilobytes; the bounds keep a hostile file from
// exhausting the decoder: github.com/BurntSushi/toml v1.6.0 holds about
// 0.5–1 KiB per key, and its cost grows with the square of the nesting (a
// 400 KB inline table nested 100 000 deep, or a dotted key of a million
// parts in 2 MB, takes over 20 GB).
const (
	// MaxBytes bounds the file's size.
	MaxBytes = 1 << 20
	// MaxDepth bounds the nesting of arrays and inline tables.
	MaxDepth = 8
	// MaxKeyPath bounds the full path of a key: the parts of its table
	// header, of the keys of the inline tables around it and of its own
	// dotted name ([a.b] c = { d.e = 1 } defines a.b.c.d.e, 5 parts).
	MaxKeyPath = 10
	// MaxKeys bounds the keys assigned and the table headers.
	MaxKeys = 10_000
	// MaxValues bounds the array elements and inline-table entries (counted
	// as commas plus opening brackets and braces).
	MaxValues = 200_000
)

// checkShape scans text as TOML's lexer would (comments, the four kinds
// of strings, brackets, braces, keys) and refuses a file over the bounds
// above, naming the line. It does not validate the syntax: the decoder
// does, once the file is known to be small enough for it.
func checkShape(file, text string) error {
	if len(text) > MaxBytes {
		return &Error{File: file, Msg: fmt.Sprintf("file of %d bytes; at most %d accepted", len(text), MaxBytes)}
	}
	var stack []byte // open '[' and '{'
	line, keys, values := 1, 0, 0
	inKey, parts := true, 1 // reading a key, and its parts so far
	lineStart := true       // only blanks since the last newline
	var bases []int         // for each open '[' and '{', the key path of the value it opens
	table := 0              // parts of the current table header
	last := 0               // the path of the last key assigned
	base := func() int {    // the path that keys read now extend
		if n := len(bases); n > 0 {
			return bases[n-1]
		}
		return table
	}
	fail := func(format string, args ...any) error {
		return &Error{File: file, Line: line, Msg: fmt.Sprintf(format, args...)}
	}
	for i := 0; i < len(text); i++ {
		c := text[i]
		wasStart := lineStart
		if c != ' ' && c != '\t' && c != '\r' {
			lineStart = false
		}
		switch c {
		case '\n':
			line++
			lineStart = true
			if len(stack) == 0 {
				inKey, parts = true, 1
			}
		case '#':
			for i+1 < len(text) && text[i+1] != '\n' {
				i++
			}
		case '"', '\'':
			j, nl := skipString(text, i)
			line += nl
			i = j - 1
		case '[':
			if len(stack) == 0 && inKey && wasStart {
				// A table header: [a.b] or [[a.b]].
				j, hp, nl := header(text, i)
				line += nl
				if hp > MaxKeyPath {
					return fail("table header with %d parts; at most %d accepted", hp, MaxKeyPath)
				}
				table = hp
				if keys++; keys > MaxKeys {
					return fail("more than %d keys and tables", MaxKeys)
				}
				i = j - 1
				continue
			}
			fallthrough
		case '{':
			stack = append(stack, c)
			bases = append(bases, last)
			if len(stack) > MaxDepth {
				return fail("arrays and inline tables nested more than %d deep", MaxDepth)
			}
			if values++; values > MaxValues {
				return fail("more than %d values in arrays and inline tables", MaxValues)
			}
			inKey, parts = c == '{', 1
		case ']', '}':
			if n := len(stack); n > 0 && stack[n-1] == c-2 { // '[' = ']'-2, '{' = '}'-2
				stack, bases = stack[:n-1], bases[:n-1]
			}
			inKey = false
		case ',':
			if values++; values > MaxValues {
				return fail("more than %d values in arrays and inline tables", MaxValues)
			}
			if n := len(stack); n > 0 && stack[n-1] == '{' {
				inKey, parts = true, 1
			}
		case '.':
			if inKey {
				if parts++; base()+parts > MaxKeyPath {
					return fail("key path with more than %d parts (table header, enclosing inline tables and dotted key)", MaxKeyPath)
				}
			}
		case '=':
			if inKey {
				last = base() + parts
				if keys++; keys > MaxKeys {
					return fail("more than %d keys and tables", MaxKeys)
				}
				inKey = false
			}
		}
	}
	return nil
}

// skipString returns the index just past the string starting at text[i]
// (a quote), and the newlines inside it. An unterminated single-line string
// ends at the newline (the decoder reports it).
func skipString(text string, i int) (end, newlines int) {
	q := text[i]
	escapes := q == '"'
	if strings.HasPrefix(text[i:], strings.Repeat(string(q), 3)) {
		j := i + 3
		for j < len(text) {
			switch {
			case escapes && text[j] == '\\':
				if j+1 < len(text) && text[j+1] == '\n' {
					newlines++
				}
				j += 2
				continue
			case text[j] == '\n':
				newlines++
			case strings.HasPrefix(text[j:], strings.Repeat(string(q), 3)):
				j += 3
				// Up to two more quotes belong to the content ("""a"""").
				for k := 0; k < 2 && j < len(text) && text[j] == q; k++ {
					j++
				}
				return j, newlines
			}
			j++
		}
		return len(text), newlines
	}
	j := i + 1
	for j < len(text) && text[j] != '\n' {
		switch {
		case escapes && text[j] == '\\':
			j++
		case text[j] == q:
			return j + 1, newlines
		}
		j++
	}
	return j, newlines
}

// header reads a table header starting at text[i] ('['): the index past
// its closing bracket(s), its number of dotted parts and its newlines.
func header(text string, i int) (end, parts, newlines int) {
	j := i + 1
	if j < len(text) && text[j] == '[' {
		j++
	}
	parts = 1
	for j < len(text) && text[j] != '\n' {
		switch text[j] {
		case '"', '\'':
			k, nl := skipString(text, j)
			newlines += nl
			j = k
			continue
		case '.':
			parts++
		case ']':
			j++
			if j < len(text) && text[j] == ']' {
				j++
			}
			return j, parts, newlines
		}
		j++
	}
	return j, parts, newlines
}
