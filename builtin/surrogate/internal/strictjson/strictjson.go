package strictjson

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"reflect"
	"strconv"
	"strings"
)

// DefaultMaxLen bounds a list whose field has no `maxlen` tag.
const DefaultMaxLen = 1 << 20

var unmarshaler = reflect.TypeFor[json.Unmarshaler]()

// Unmarshal decodes data into v (a pointer) as json.Unmarshal does, after
// refusing unknown keys and lists longer than their field's `maxlen` tag
// (a decimal count; DefaultMaxLen without one). A type that implements
// json.Unmarshaler decodes its own value and bounds it itself.
func Unmarshal(data []byte, v any) error {
	if !json.Valid(data) {
		// json.Unmarshal checks the syntax before it decodes anything and
		// returns the error with its offset.
		return json.Unmarshal(data, v)
	}
	w := &walker{b: data}
	if err := w.value(reflect.TypeOf(v), DefaultMaxLen, ""); err != nil {
		return err
	}
	return json.Unmarshal(data, v)
}

// walker reads a document that json.Valid accepted.
type walker struct {
	b      []byte
	i      int
	fields map[reflect.Type]map[string]field // fieldsOf, per struct type
}

func (w *walker) space() {
	for w.i < len(w.b) {
		switch w.b[w.i] {
		case ' ', '\t', '\n', '\r':
			w.i++
		default:
			return
		}
	}
}

// value checks the value at w.i against type t; maxLen bounds it if it is
// a list; at names it in errors.
func (w *walker) value(t reflect.Type, maxLen int, at string) error {
	w.space()
	for t != nil && t.Kind() == reflect.Pointer && !t.Implements(unmarshaler) {
		t = t.Elem()
	}
	if w.i >= len(w.b) || t == nil || t.Kind() == reflect.Interface || t.Implements(unmarshaler) || reflect.PointerTo(t).Implements(unmarshaler) {
		w.skip()
		return nil
	}
	switch c := w.b[w.i]; {
	case c == '{' && t.Kind() == reflect.Struct:
		fs, ok := w.fields[t]
		if !ok {
			fs = fieldsOf(t)
			if w.fields == nil {
				w.fields = map[reflect.Type]map[string]field{}
			}
			w.fields[t] = fs
		}
		return w.object(fs, nil, at)
	case c == '{' && t.Kind() == reflect.Map:
		return w.object(nil, t.Elem(), at)
	case c == '[' && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array):
		return w.array(t.Elem(), maxLen, at)
	}
	w.skip()
	return nil
}

func (w *walker) object(fields map[string]field, elem reflect.Type, at string) error {
	w.i++ // {
	for {
		w.space()
		if w.b[w.i] == '}' {
			w.i++
			return nil
		}
		key := w.key()
		w.space()
		w.i++ // :
		where := key
		if at != "" {
			where = at + "." + key
		}
		if fields != nil {
			f, ok := lookup(fields, key)
			if !ok {
				return fmt.Errorf("json: unknown field %q", where)
			}
			if err := w.value(f.t, f.maxLen, where); err != nil {
				return err
			}
		} else if err := w.value(elem, DefaultMaxLen, where); err != nil {
			return err
		}
		w.space()
		if w.b[w.i] == ',' {
			w.i++
		}
	}
}

func (w *walker) array(elem reflect.Type, maxLen int, at string) error {
	w.i++ // [
	for n := 0; ; n++ {
		w.space()
		if w.b[w.i] == ']' {
			w.i++
			return nil
		}
		if n == maxLen {
			return fmt.Errorf("json: more than %d values in the list %q", maxLen, at)
		}
		if err := w.value(elem, DefaultMaxLen, fmt.Sprintf("%s[%d]", at, n)); err != nil {
			return err
		}
		w.space()
		if w.b[w.i] == ',' {
			w.i++
		}
	}
}

// key reads an object key, unescaped.
func (w *walker) key() string {
	raw := w.str()
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw)
	}
	var s string
	_ = json.Unmarshal(w.b[w.i-len(raw)-2:w.i], &s) // valid: checked by json.Valid
	return s
}

// str reads the string at w.i and returns its raw content.
func (w *walker) str() []byte {
	start := w.i + 1
	j := start
	for {
		k := bytes.IndexByte(w.b[j:], '"')
		if k < 0 {
			w.i = len(w.b)
			return w.b[start:]
		}
		j += k
		bs := 0
		for m := j - 1; m >= start && w.b[m] == '\\'; m-- {
			bs++
		}
		if bs%2 == 0 {
			w.i = j + 1
			return w.b[start:j]
		}
		j++
	}
}

// skip passes over one value of any kind.
func (w *walker) skip() {
	depth := 0
	for w.i < len(w.b) {
		switch c := w.b[w.i]; {
		case c == '"':
			w.str()
		case c == '{' || c == '[':
			depth++
			w.i++
			continue
		case c == '}' || c == ']':
			depth--
			w.i++
		case depth > 0:
			w.i++
			continue
		default: // a number or a literal
			for w.i < len(w.b) && !strings.ContainsRune(",}] \t\r\n", rune(w.b[w.i])) {
				w.i++
			}
		}
		if depth <= 0 {
			return
		}
	}
}

type field struct {
	t      reflect.Type
	maxLen int
}

// fieldsOf lists the JSON names of a struct's fields as encoding/json
// does: the tag's name or the field's, embedded structs flattened.
func fieldsOf(t reflect.Type) map[string]field {
	m := map[string]field{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		ft := f.Type
		if f.Anonymous && name == "" {
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				for k, v := range fieldsOf(ft) {
					if _, ok := m[k]; !ok {
						m[k] = v
					}
				}
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		maxLen := DefaultMaxLen
		if s := f.Tag.Get("maxlen"); s != "" {
			if n, err := strconv.Atoi(s); err == nil && n >= 0 {
				maxLen = n
			}
		}
		m[name] = field{t: ft, maxLen: maxLen}
	}
	return m
}

// lookup finds a key as encoding/json does: exactly, else ignoring case.
func lookup(fields map[string]field, key string) (field, bool) {
	if f, ok := fields[key]; ok {
		return f, true
	}
	for name, f := range fields {
		if strings.EqualFold(name, key) {
			return f, true
		}
	}
	return field{}, false
}

// ReadAll reads r to its end, but no more than limit+1 bytes (a result
// longer than limit says the input is too large). For a regular file it
// allocates once, at the file's size: io.ReadAll's doubling could hold
// twice a large file.
func ReadAll(r io.Reader, limit int64) ([]byte, error) {
	hint := int64(0)
	if st, ok := r.(interface{ Stat() (os.FileInfo, error) }); ok {
		if fi, err := st.Stat(); err == nil && fi.Mode().IsRegular() {
			hint = min(fi.Size(), limit)
		}
	}
	// bytes.Buffer reads while at least 512 bytes are free: room for the
	// final read that sees the end keeps it from growing.
	buf := bytes.NewBuffer(make([]byte, 0, hint+1024))
	_, err := buf.ReadFrom(&io.LimitedReader{R: r, N: limit + 1})
	return buf.Bytes(), err
}
