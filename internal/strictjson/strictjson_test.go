package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"
)

type inner struct {
	A int               `json:"a"`
	M map[string]inner2 `json:"m,omitempty"`
}

type inner2 struct {
	X float64
}

type Embedded struct {
	E string `json:"e"`
}

type doc struct {
	Embedded
	Name   string          `json:"name"`
	List   []inner         `json:"list" maxlen:"3"`
	Ptr    *inner          `json:"ptr,omitempty"`
	Nums   []float64       `json:"nums"`
	Any    any             `json:"any"`
	Raw    json.RawMessage `json:"raw"`
	Skip   int             `json:"-"`
	Plain  int
	hidden int
}

// reference decodes with encoding/json's Decoder and
// DisallowUnknownFields, the behaviour Unmarshal keeps (apart from maxlen),
// and refuses data after the document as json.Unmarshal does.
func reference(data []byte) (doc, error) {
	var d doc
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&d); err != nil {
		return d, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return d, errors.New("data after the document")
	}
	return d, nil
}

var corpus = []string{
	`{"name":"x","list":[{"a":1},{"a":2,"m":{"k":{"X":1}}}],"nums":[1,2,3]}`,
	`{"name":"x","bogus":1}`,
	`{"list":[{"a":1,"b":2}]}`,
	`{"ptr":{"a":1,"m":{"k":{"X":1,"Y":2}}}}`,
	`{"ptr":{"a":1,"m":{"k":{"x":1}}}}`, // case-insensitive, as encoding/json
	`{"NAME":"x","plain":3,"Plain":4}`,
	`{"e":"embedded","any":{"whatever":[1,{"deep":true}]},"raw":{"free":1}}`,
	`{"Skip":1}`,
	`{"hidden":1}`,
	`{"name":"a \"quoted\" {brace} [bracket] \\\\","list":[]}`,
	`{"n\u0061me":"escaped key"}`,
	`{"n\u0062me":"escaped unknown key"}`,
	`{"name":"x"`,
	`{"name":"x"} {}`,
	`[1,2]`,
	`null`,
	`{"list":{"a":1}}`,
	`{"nums":[1,"two"]}`,
	`  {  "name" : "spaces" , "nums" : [ 1 , 2 ]  }  `,
	`{"ptr":null,"list":null,"nums":[-1.5e3,0,1E+2]}`,
}

// Unmarshal accepts and refuses what encoding/json's strict Decoder does,
// and decodes the same values.
func TestMatchesDisallowUnknownFields(t *testing.T) {
	for _, s := range corpus {
		want, werr := reference([]byte(s))
		var got doc
		gerr := Unmarshal([]byte(s), &got)
		if (werr == nil) != (gerr == nil) {
			t.Errorf("%s: error %v, encoding/json's strict Decoder %v", s, gerr, werr)
			continue
		}
		if werr != nil && strings.Contains(werr.Error(), "unknown field") != strings.Contains(gerr.Error(), "unknown field") {
			t.Errorf("%s: error %v, encoding/json's strict Decoder %v", s, gerr, werr)
		}
		if werr == nil {
			a, _ := json.Marshal(want)
			b, _ := json.Marshal(got)
			if !bytes.Equal(a, b) {
				t.Errorf("%s: decoded %s, encoding/json %s", s, b, a)
			}
		}
	}
}

func TestUnknownFieldNamesItsPath(t *testing.T) {
	var d doc
	err := Unmarshal([]byte(`{"list":[{"a":1},{"a":1,"evil":2}]}`), &d)
	if err == nil || !strings.Contains(err.Error(), `unknown field "list[1].evil"`) {
		t.Fatalf("error %v", err)
	}
}

// A list longer than its maxlen tag, or than DefaultMaxLen, is refused
// before anything is decoded.
func TestListBounds(t *testing.T) {
	var d doc
	err := Unmarshal([]byte(`{"list":[{},{},{},{}]}`), &d)
	if err == nil || !strings.Contains(err.Error(), `more than 3 values in the list "list"`) {
		t.Fatalf("maxlen: error %v", err)
	}
	if d.List != nil {
		t.Fatalf("decoded %d elements before refusing", len(d.List))
	}
	if err := Unmarshal([]byte(`{"list":[{},{},{}]}`), &d); err != nil || len(d.List) != 3 {
		t.Fatalf("3 elements: %v, %d", err, len(d.List))
	}
	big := "{\"nums\":[" + strings.Repeat("0,", DefaultMaxLen) + "0]}"
	if err := Unmarshal([]byte(big), &d); err == nil || !strings.Contains(err.Error(), "more than 1048576 values") {
		t.Fatalf("default bound: error %v", err)
	}
}

// The walk allocates nothing in proportion to the document: a list bomb
// of ~2 MB costs a few kilobytes before it is refused (encoding/json would
// build its 700 000 structs first).
func TestRefusalAllocatesLittle(t *testing.T) {
	type bomb struct {
		L []inner `json:"l" maxlen:"10"`
	}
	data := []byte(`{"l":[` + strings.Repeat("{},", 700000) + `{}]}`)
	allocs := testing.AllocsPerRun(3, func() {
		var b bomb
		if err := Unmarshal(data, &b); err == nil {
			t.Fatal("accepted")
		}
	})
	if allocs > 50 {
		t.Errorf("%v allocations to refuse a list bomb", allocs)
	}
}

func FuzzUnmarshal(f *testing.F) {
	for _, s := range corpus {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		_, werr := reference(data)
		var got doc
		gerr := Unmarshal(data, &got)
		if werr == nil && gerr != nil && !strings.Contains(gerr.Error(), "values in the list") {
			t.Fatalf("%q: refused (%v), encoding/json accepts", data, gerr)
		}
		if werr != nil && gerr == nil {
			t.Fatalf("%q: accepted, encoding/json refuses (%v)", data, werr)
		}
	})
}

// Decode with AllowUnknown skips unknown keys (json.Unmarshal's behaviour)
// but still bounds the lists of known ones.
func TestDecodeAllowUnknown(t *testing.T) {
	var d doc
	if err := Decode([]byte(`{"name":"x","bogus":[{},{},{"deep":[1,2]}],"plain":3}`), &d, Options{AllowUnknown: true}); err != nil {
		t.Fatal(err)
	}
	if d.Name != "x" || d.Plain != 3 {
		t.Errorf("decoded %+v", d)
	}
	err := Decode([]byte(`{"bogus":1,"list":[{},{},{},{}]}`), &d, Options{AllowUnknown: true})
	if err == nil || !strings.Contains(err.Error(), `more than 3 values in the list "list"`) {
		t.Errorf("a list over its maxlen with AllowUnknown: %v", err)
	}
}

type sample struct {
	Theta    []float64
	LogPrior float64
	LogLik   float64
	Extra    []float64
}

type state struct {
	Samples [][]sample  `json:"samples"`
	Draws   [][]float64 `json:"draws"`
	Report  any         `json:"report"`
}

// PerByte refuses documents whose values would take many times their
// text: a list of empty structs (64 bytes each per 3 characters), a list
// of empty lists, empty objects inside an interface; it accepts lists of
// numbers (8 bytes per 2 characters) and realistic samples. The estimate
// is checked against what json.Unmarshal allocates.
func TestDecodePerByte(t *testing.T) {
	const perByte = 6
	n := 200_000
	bombs := map[string]string{
		"structs in lists of lists": `{"samples":[[` + strings.Repeat("{},", n) + `{}]]}`,
		"empty lists":               `{"draws":[` + strings.Repeat("[],", n) + `[]]}`,
		"objects in an interface":   `{"report":[` + strings.Repeat("{},", n) + `{}]}`,
		"lists in an interface":     `{"report":{"a":[` + strings.Repeat("[],", n) + `[]]}}`,
	}
	for name, text := range bombs {
		var s state
		err := Decode([]byte(text), &s, Options{PerByte: perByte})
		var tc *TooCostly
		if !errors.As(err, &tc) {
			t.Errorf("%s: err %v, want *TooCostly", name, err)
			continue
		}
		if s.Samples != nil || s.Draws != nil || s.Report != nil {
			t.Errorf("%s: decoded although refused", name)
		}
		// The estimate is of the right size: what json.Unmarshal's result
		// holds live is within a factor 2 of it.
		var before, after runtime.MemStats
		data := []byte(text)
		runtime.GC()
		runtime.ReadMemStats(&before)
		if err := json.Unmarshal(data, &s); err != nil {
			t.Fatal(err)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		got := int64(after.HeapAlloc) - int64(before.HeapAlloc)
		runtime.KeepAlive(s)
		runtime.KeepAlive(data)
		if got < tc.Cost/2 || got > 2*tc.Cost {
			t.Errorf("%s: estimated %d bytes, json.Unmarshal's result holds %d", name, tc.Cost, got)
		}
	}
	var b strings.Builder
	b.WriteString(`{"draws":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`[0.12345678901234,-1.5]`)
	}
	b.WriteString(`],"samples":[[`)
	for i := range n / 10 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"Theta":[0.25,3.5],"LogPrior":-1,"LogLik":-2.5,"Extra":null}`)
	}
	b.WriteString(`]],"report":{"acceptance":[` + strings.Repeat("0.25,", n) + `0.25]}}`)
	var s state
	if err := Decode([]byte(b.String()), &s, Options{PerByte: perByte}); err != nil {
		t.Fatalf("a realistic state: %v", err)
	}
	if len(s.Draws) != n || len(s.Samples[0]) != n/10 || len(s.Report.(map[string]any)["acceptance"].([]any)) != n+1 {
		t.Errorf("decoded %d draws, %d samples", len(s.Draws), len(s.Samples[0]))
	}
	// A flat list of numbers: 4 bytes per byte of text.
	var nums struct {
		X []float64 `json:"x"`
	}
	if err := Decode([]byte(`{"x":[`+strings.Repeat("0,", n)+`0]}`), &nums, Options{PerByte: 4}); err != nil {
		t.Errorf("a list of numbers at 4 per byte: %v", err)
	}
}

// NoNullNumbers (in Lenient) refuses null for a plain number, which
// encoding/json leaves at 0 (audit 10: a null θ in a stage's record
// became 0); a pointer or a json.Unmarshaler may take null.
func TestNoNullNumbers(t *testing.T) {
	var v struct {
		Theta   map[string]float64 `json:"theta"`
		Journal int                `json:"journal"`
		Opt     *float64           `json:"opt"`
		List    []float64          `json:"list"`
	}
	for doc, want := range map[string]string{
		`{"theta": {"a": 1, "b": null}}`: "null at theta.b, where a number is required",
		`{"journal": null}`:              "null at journal, where a number is required",
		`{"list": [1, null]}`:            "null at list, where a number is required",
	} {
		if err := Decode([]byte(doc), &v, Lenient); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", doc, err, want)
		}
	}
	if err := Decode([]byte(`{"opt": null, "theta": {"a": 1}}`), &v, Lenient); err != nil {
		t.Errorf("a null pointer: %v", err)
	}
	if err := Decode([]byte(`{"journal": null}`), &v, Options{AllowUnknown: true}); err != nil {
		t.Errorf("without the option: %v", err)
	}
}
