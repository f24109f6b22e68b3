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
	return Decode(data, v, Options{})
}

// Options change what Decode accepts.
type Options struct {
	// AllowUnknown skips a key the target has no field for, as
	// json.Unmarshal does (its value is not decoded, so it costs no
	// memory), instead of refusing it.
	AllowUnknown bool
	// PerByte, when > 0, bounds the memory the decoded values take to
	// PerByte bytes per byte of the document (plus 64 KiB). The walk
	// estimates it from the target's types: each list element costs its
	// type's size, each pointer followed its pointee's, each map entry
	// twice its key and value, each value decoded into an interface its
	// boxed size. A list of numbers costs 8 bytes per 2 characters ("0,"),
	// 4 per byte; a list of empty structs "{}," can cost 20 or more per
	// byte and is refused at PerByte 6 even where each list is within its
	// maxlen (a list of a million lists of …).
	PerByte int
	// NoNullNumbers refuses null for a number that is not behind a
	// pointer (encoding/json leaves it at 0, a value the writer never
	// wrote: audit 10, a null θ of a multi-stage record became 0).
	NoNullNumbers bool
}

// Decode is Unmarshal with options.
func Decode(data []byte, v any, o Options) error {
	if !json.Valid(data) {
		// json.Unmarshal checks the syntax before it decodes anything and
		// returns the error with its offset.
		return json.Unmarshal(data, v)
	}
	w := &walker{b: data, loose: o.AllowUnknown, noNull: o.NoNullNumbers}
	if err := w.value(reflect.TypeOf(v), DefaultMaxLen, ""); err != nil {
		return err
	}
	if o.PerByte > 0 {
		if limit := int64(o.PerByte)*int64(len(data)) + 64<<10; w.cost > limit {
			return &TooCostly{Cost: w.cost, Size: len(data), PerByte: o.PerByte}
		}
	}
	return json.Unmarshal(data, v)
}

// TooCostly is Decode's error for a document whose decoded values would
// take more memory than Options.PerByte allows.
type TooCostly struct {
	Cost    int64 // estimated bytes of the decoded values
	Size    int   // of the document
	PerByte int
}

func (e *TooCostly) Error() string {
	return fmt.Sprintf("json: the document of %d bytes would decode into about %d bytes of values, more than %d per byte of text (a list of empty values?)",
		e.Size, e.Cost, e.PerByte)
}

// walker reads a document that json.Valid accepted.
type walker struct {
	b      []byte
	i      int
	fields map[reflect.Type]map[string]field // fieldsOf, per struct type
	loose  bool                              // Options.AllowUnknown
	noNull bool                              // Options.NoNullNumbers
	cost   int64                             // estimated bytes decoded (Options.PerByte)
}

// Sizes of what encoding/json allocates for a value decoded into an
// interface (a []any's header, a map[string]any's header and per-entry
// cost, a boxed float64) and per map entry besides key and value.
const (
	sliceHeader = 24
	mapHeader   = 48
	ifaceSize   = 16
	mapEntry    = 8
)

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
	if w.noNull && t != nil && w.i < len(w.b) && w.b[w.i] == 'n' && number(t) && !t.Implements(unmarshaler) && !reflect.PointerTo(t).Implements(unmarshaler) {
		where := at
		if where == "" {
			where = "the document"
		}
		return fmt.Errorf("json: null at %s, where a number is required", where)
	}
	for t != nil && t.Kind() == reflect.Pointer && !t.Implements(unmarshaler) {
		t = t.Elem()
		if w.i < len(w.b) && w.b[w.i] != 'n' { // not null: the pointee is allocated
			w.cost += int64(t.Size())
		}
	}
	if t != nil && t.Kind() == reflect.Interface && t.NumMethod() == 0 && w.i < len(w.b) {
		return w.anyValue(maxLen, at)
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
	return w.members(func(key string) error {
		where := key
		if at != "" {
			where = at + "." + key
		}
		if fields == nil {
			w.cost += 2*int64(len(key)+int(elem.Size())) + mapEntry
			return w.value(elem, DefaultMaxLen, where)
		}
		f, ok := lookup(fields, key)
		switch {
		case !ok && w.loose:
			w.skip()
			return nil
		case !ok:
			return fmt.Errorf("json: unknown field %q", where)
		}
		return w.value(f.t, f.maxLen, where)
	})
}

func (w *walker) array(elem reflect.Type, maxLen int, at string) error {
	return w.elements(maxLen, at, func(n int) error {
		w.cost += int64(elem.Size())
		where := at
		if composite(elem) { // only these can fail: name the element
			where = fmt.Sprintf("%s[%d]", at, n)
		}
		return w.value(elem, DefaultMaxLen, where)
	})
}

// members passes the object at w.i, calling each with every key and w.i
// at its value, which each must pass.
func (w *walker) members(each func(key string) error) error {
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
		w.space()
		if err := each(key); err != nil {
			return err
		}
		w.space()
		if w.b[w.i] == ',' {
			w.i++
		}
	}
}

// elements passes the list at w.i, calling each with every element's
// index and w.i at it, which each must pass; a list of more than maxLen
// elements is refused.
func (w *walker) elements(maxLen int, at string, each func(n int) error) error {
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
		if err := each(n); err != nil {
			return err
		}
		w.space()
		if w.b[w.i] == ',' {
			w.i++
		}
	}
}

// composite tells whether a value of type t can hold a list or an object.
func composite(t reflect.Type) bool {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Map, reflect.Slice, reflect.Array, reflect.Interface:
		return true
	}
	return false
}

// anyValue checks the value at w.i that decodes into an interface
// (map[string]any, []any, float64, string, bool or nil), counting what it
// allocates; a list in it is bounded by maxLen (its field's, then
// DefaultMaxLen).
func (w *walker) anyValue(maxLen int, at string) error {
	switch w.b[w.i] {
	case '{':
		w.cost += mapHeader
		return w.members(func(key string) error {
			w.cost += 2*int64(len(key)+ifaceSize) + mapEntry
			return w.anyValue(DefaultMaxLen, at+"."+key)
		})
	case '[':
		w.cost += sliceHeader
		return w.elements(maxLen, at, func(int) error {
			w.cost += ifaceSize
			return w.anyValue(DefaultMaxLen, at+"[]")
		})
	case '"':
		w.cost += ifaceSize
		w.skip()
	case 'n', 't', 'f':
		w.skip()
	default:
		w.cost += 8 // a boxed float64
		w.skip()
	}
	return nil
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

// Lenient is the Options kinfer decodes the records of a run directory
// and the methods' saved states with: unknown keys skipped (as
// json.Unmarshal does), at most 6 bytes of decoded values per byte of
// text (lists of numbers take 4).
var Lenient = Options{AllowUnknown: true, PerByte: 6, NoNullNumbers: true}

// number reports whether t is a numeric kind (not a pointer to one).
func number(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return true
	}
	return false
}
