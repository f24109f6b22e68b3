package tomlx

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
	"github.com/kinfer/kinfer/host/safefile"
	"github.com/kinfer/kinfer/internal/guesttext"
)

// Error is a decoding problem at a place in a TOML file.
type Error struct {
	File string
	Line int    // 1-based; 0 when unknown
	Key  string // dotted key path; empty when not about a key
	Msg  string
	Err  error // the error Msg says, when it came from one (Decoded.Wrap)
}

// Unwrap is the error the message came from, if any.
func (e *Error) Unwrap() error { return e.Err }

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	if e.Key != "" {
		fmt.Fprintf(&b, ": key %q", e.Key)
	}
	b.WriteString(": ")
	b.WriteString(e.Msg)
	return b.String()
}

// Decoded is a successfully decoded file with its metadata, for callers that
// check semantic constraints and want to report them with a line.
type Decoded struct {
	File  string
	Meta  toml.MetaData
	lines map[string]int
	// SHA256 is the hex digest of the bytes DecodeFile decoded ("" for
	// Decode): a run records it, not a second read's (audit 17: a file
	// replaced while it loaded was recorded with the other's digest).
	SHA256 string
}

// Errorf returns an *Error at the line where key (a dotted path, as in the
// file) is defined.
func (d *Decoded) Errorf(key string, format string, args ...any) error {
	return &Error{File: d.File, Line: d.Line(key), Key: key, Msg: fmt.Sprintf(format, args...)}
}

// Wrap is Errorf(key, "%v", err) that keeps err for errors.Is and As.
func (d *Decoded) Wrap(key string, err error) error {
	return &Error{File: d.File, Line: d.Line(key), Key: key, Msg: err.Error(), Err: err}
}

// Line is the 1-based line on which key (or, for a key inside an inline
// table or array, its nearest enclosing key) is first defined, or 0.
func (d *Decoded) Line(key string) int {
	for k := key; k != ""; {
		if l, ok := d.lines[k]; ok {
			return l
		}
		// "stages[0]" is on the line of "stages"; "a.b" on that of "a".
		if strings.HasSuffix(k, "]") {
			if i := strings.LastIndexByte(k, '['); i > 0 {
				k = k[:i]
				continue
			}
		}
		i := strings.LastIndexByte(k, '.')
		if i < 0 {
			break
		}
		k = k[:i]
	}
	return 0
}

// keyLines maps each dotted key path to the first line defining it, by a
// light scan of table headers and "key =" lines. BurntSushi/toml keeps key
// positions private, and the scan is only used to point at a line in error
// messages, after the file parsed successfully.
func keyLines(text string) map[string]int {
	lines := map[string]int{}
	set := func(k string, line int) {
		if _, ok := lines[k]; !ok {
			lines[k] = line
		}
	}
	table, plain := "", "" // table may carry an array index: "likelihood[1]"
	count := map[string]int{}
	for i, raw := range strings.Split(text, "\n") {
		ln := strings.TrimSpace(raw)
		if ln == "" || ln[0] == '#' {
			continue
		}
		if strings.HasPrefix(ln, "[") {
			array := strings.HasPrefix(ln, "[[")
			if j := strings.IndexByte(ln, '#'); j >= 0 {
				ln = ln[:j]
			}
			plain = unquoteKey(strings.Trim(ln, "[] \t"))
			table = plain
			if array {
				table = fmt.Sprintf("%s[%d]", plain, count[plain])
				count[plain]++
			}
			set(table, i+1)
			set(plain, i+1)
			continue
		}
		eq := strings.IndexByte(ln, '=')
		if eq <= 0 {
			continue
		}
		k := unquoteKey(strings.TrimSpace(ln[:eq]))
		if table == "" {
			set(k, i+1)
			continue
		}
		set(table+"."+k, i+1)
		set(plain+"."+k, i+1)
	}
	return lines
}

func unquoteKey(k string) string {
	parts := strings.Split(k, ".")
	for i, p := range parts {
		parts[i] = strings.Trim(strings.TrimSpace(p), "\"'")
	}
	return strings.Join(parts, ".")
}

// Has reports whether key is defined in the file.
func (d *Decoded) Has(key string) bool { return d.Meta.IsDefined(strings.Split(key, ".")...) }

// DecodeFile reads path and decodes it into v strictly. Keys under the
// opaque tables (decoded into map[string]any and checked by the caller) are
// not reported as unknown.
func DecodeFile(path string, v any, opaque ...string) (*Decoded, error) {
	data, err := safefile.ReadFile(path, MaxBytes)
	if err != nil {
		var tl *safefile.TooLarge
		if errors.As(err, &tl) {
			return nil, &Error{File: path, Msg: fmt.Sprintf("too large: at most %s accepted", safefile.Bytes(MaxBytes))}
		}
		return nil, err
	}
	d, err := Decode(path, string(data), v, opaque...)
	if d != nil {
		h := sha256.Sum256(data)
		d.SHA256 = hex.EncodeToString(h[:])
	}
	return d, err
}

// Decode decodes text (named file in errors) into v. Unknown keys are
// reported, the first one in file order; keys under an opaque table are the
// caller's to check.
//
// The text is first checked against MaxBytes, MaxDepth, MaxKeyParts,
// MaxKeys and MaxValues.
func Decode(file, text string, v any, opaque ...string) (*Decoded, error) {
	if err := checkShape(file, text); err != nil {
		return nil, err
	}
	md, err := toml.Decode(text, v)
	if err != nil {
		return nil, convert(file, err)
	}
	d := &Decoded{File: file, Meta: md, lines: keyLines(text)}
	// BurntSushi/toml matches a key to a struct field without regard to
	// case when no field matches exactly: `SEED = 7` set seed, and beside
	// `seed = 1` silently overrode it. Keys are case-sensitive here.
	for _, k := range md.Keys() {
		if opaqueKey(opaque, k) {
			continue
		}
		if want := caseMismatch(reflect.TypeOf(v), k); want != "" {
			return nil, &Error{File: file, Line: d.Line(k.String()), Key: k.String(),
				Msg: fmt.Sprintf("unknown key %q: keys are case-sensitive (did you mean %q?)", k[len(k)-1], want)}
		}
	}
	var und []toml.Key
	for _, k := range md.Undecoded() {
		if !opaqueKey(opaque, k) {
			und = append(und, k)
		}
	}
	// No string of a study or manifest holds a control character: they
	// are names and paths, printed in messages and pages (audit 10: an
	// init path with an escape sequence retitled the terminal).
	var raw map[string]any
	if _, err := toml.Decode(text, &raw); err == nil {
		if key, v, bad := controlString("", raw); bad {
			return nil, &Error{File: file, Line: d.Line(key), Key: key,
				Msg: fmt.Sprintf("\"%s\" has a control character, a bidirectional control or invalid UTF-8 (no name or path may)", guesttext.Escape(v))}
		}
	}
	if len(und) > 0 {
		sort.SliceStable(und, func(i, j int) bool {
			return d.Line(und[i].String()) < d.Line(und[j].String())
		})
		k := und[0]
		msg := "unknown key"
		if parent := k[:len(k)-1]; len(parent) > 0 {
			msg = fmt.Sprintf("unknown key %q in [%s]", k[len(k)-1], parent.String())
		}
		if len(und) > 1 {
			msg += fmt.Sprintf(" (and %d more)", len(und)-1)
		}
		return nil, &Error{File: file, Line: d.Line(k.String()), Key: k.String(), Msg: msg}
	}
	return d, nil
}

func convert(file string, err error) error {
	var pe toml.ParseError
	if errors.As(err, &pe) {
		msg := pe.Message
		if msg == "" {
			msg = pe.Error()
		}
		e := &Error{File: file, Line: pe.Position.Line, Msg: msg}
		if pe.LastKey != "" {
			e.Key = pe.LastKey
		}
		return e
	}
	// Type mismatches come as plain errors: "toml: line N (last key "k"): msg".
	if m := typeErr.FindStringSubmatch(err.Error()); m != nil {
		line, _ := strconv.Atoi(m[1])
		msg := typeMsg(m[3])
		if strings.HasPrefix(msg, "want an array, got a table") {
			// [data] where [[data]] was meant (audit 4).
			msg += fmt.Sprintf(" (each entry of a list of tables is written [[%s]], with double brackets)", m[2])
		}
		return &Error{File: file, Line: line, Key: m[2], Msg: msg}
	}
	return &Error{File: file, Msg: strings.TrimPrefix(err.Error(), "toml: ")}
}

var typeErr = regexp.MustCompile(`^toml: (?:line (\d+) )?\(last key "([^"]*)"\): (.*)$`)

var incompatible = regexp.MustCompile(`^incompatible types: TOML value has type ([^;]+); destination has type (\S+)$`)

// typeMsg rewrites the decoder's "incompatible types: TOML value has type
// float64; destination has type integer" as "want an integer, got a
// float (…)".
func typeMsg(msg string) string {
	m := incompatible.FindStringSubmatch(msg)
	if m == nil {
		return msg
	}
	got := map[string]string{"float64": "a float", "int64": "an integer", "string": "a string", "bool": "a boolean",
		"map[string]interface {}": "a table", "[]interface {}": "an array", "[]map[string]interface {}": "an array of tables",
		"map[string]any": "a table", "[]any": "an array", "[]map[string]any": "an array of tables",
		"time.Time": "a date-time"}[m[1]]
	if got == "" {
		got = m[1]
	}
	want := map[string]string{"integer": "an integer", "float": "a number", "string": "a string", "bool": "true or false",
		"slice": "an array", "map": "a table", "struct": "a table"}[m[2]]
	if want == "" {
		want = m[2]
	}
	s := fmt.Sprintf("want %s, got %s", want, got)
	if m[2] == "integer" && m[1] == "float64" {
		s += " (write an integer without a decimal point or exponent: 20_000_000_000, not 2e10)"
	}
	return s
}

// opaqueKey reports whether key k lies under one of the opaque tables,
// each a top-level name or a dotted path ("data.columns": the columns
// table of every [[data]]).
func opaqueKey(opaque []string, k toml.Key) bool {
	for _, o := range opaque {
		parts := strings.Split(o, ".")
		if len(k) >= len(parts) && slices.Equal([]string(k[:len(parts)]), parts) {
			return true
		}
	}
	return false
}

// caseMismatch walks key through the type t a TOML document decodes into
// and returns the field name a part of it matches only without regard to
// case ("" when every part matches exactly, or leads into a map or an
// interface, whose keys are the caller's).
func caseMismatch(t reflect.Type, key toml.Key) string {
	for _, part := range key {
		for t != nil && (t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			t = t.Elem()
		}
		if t == nil || t.Kind() != reflect.Struct {
			return ""
		}
		var exact, fold reflect.Type
		foldName := ""
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
			if name == "-" {
				continue
			}
			if name == "" {
				// An untagged field takes its name in any case, by
				// design; a tag is the exact key.
				name = f.Name
				if strings.EqualFold(name, part) {
					name = part
				}
			}
			if name == part {
				exact = f.Type
				break
			}
			if strings.EqualFold(name, part) && fold == nil {
				fold, foldName = f.Type, name
			}
		}
		switch {
		case exact != nil:
			t = exact
		case fold != nil:
			return foldName
		default:
			return "" // unknown: Undecoded reports it
		}
	}
	return ""
}

// controlString finds the first string (in key order) under v that is not
// guesttext.Clean, with its key ("data[0].file").
func controlString(key string, v any) (string, string, bool) {
	switch v := v.(type) {
	case string:
		return key, v, !guesttext.Clean(v)
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if !guesttext.Clean(k) {
				return joinKey(key, k), k, true
			}
			if kk, s, bad := controlString(joinKey(key, k), v[k]); bad {
				return kk, s, true
			}
		}
	case []map[string]any:
		for i, e := range v {
			if kk, s, bad := controlString(fmt.Sprintf("%s[%d]", key, i), e); bad {
				return kk, s, true
			}
		}
	case []any:
		for i, e := range v {
			if kk, s, bad := controlString(fmt.Sprintf("%s[%d]", key, i), e); bad {
				return kk, s, true
			}
		}
	}
	return "", "", false
}

func joinKey(a, b string) string {
	if a == "" {
		return b
	}
	return a + "." + b
}
