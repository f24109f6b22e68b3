package tomlx

import (
	"errors"
	"strings"
	"testing"
)

type cfg struct {
	Name  string
	Seed  int
	Inner struct {
		Value float64
	}
}

func TestUnknownKeyNamesFileLineKey(t *testing.T) {
	text := "name = \"x\"\nseed = 3\n[inner]\nvalue = 1.0\nvlaue = 2.0\n"
	var c cfg
	_, err := Decode("study.toml", text, &c)
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("want *Error, got %v", err)
	}
	if e.File != "study.toml" || e.Line != 5 || e.Key != "inner.vlaue" {
		t.Fatalf("got file=%q line=%d key=%q (%v); want study.toml:5 inner.vlaue", e.File, e.Line, e.Key, err)
	}
}

func TestWrongTypeNamesLine(t *testing.T) {
	var c cfg
	_, err := Decode("s.toml", "name = \"x\"\n\nseed = \"three\"\n", &c)
	if err == nil || !strings.Contains(err.Error(), "s.toml:3") || !strings.Contains(err.Error(), "seed") {
		t.Fatalf("want error at s.toml:3 naming seed, got %v", err)
	}
}

func TestSyntaxErrorNamesLine(t *testing.T) {
	var c cfg
	_, err := Decode("s.toml", "name = \"x\"\nseed = = 3\n", &c)
	if err == nil || !strings.Contains(err.Error(), "s.toml:2") {
		t.Fatalf("want error at s.toml:2, got %v", err)
	}
}

func TestLineOfDefinedKey(t *testing.T) {
	var c cfg
	d, err := Decode("s.toml", "name = \"x\"\n[inner]\nvalue = 1.5\n", &c)
	if err != nil {
		t.Fatal(err)
	}
	if d.Line("inner.value") != 3 || c.Inner.Value != 1.5 {
		t.Fatalf("line %d value %g", d.Line("inner.value"), c.Inner.Value)
	}
	if err := d.Errorf("inner.value", "must be < 1"); !strings.Contains(err.Error(), "s.toml:3: key \"inner.value\": must be < 1") {
		t.Fatalf("got %v", err)
	}
}

func TestArrayTableLines(t *testing.T) {
	var v struct {
		L []map[string]any `toml:"l"`
	}
	d, err := Decode("s.toml", "[[l]]\na = 1\n\n[[l]]\na = 2\nb = 3\n", &v)
	if err != nil {
		t.Fatal(err)
	}
	if d.Line("l[1].a") != 5 || d.Line("l[0].a") != 2 || d.Line("l.a") != 2 || d.Line("l[1].b") != 6 {
		t.Fatalf("lines: l[1].a=%d l[0].a=%d l.a=%d l[1].b=%d", d.Line("l[1].a"), d.Line("l[0].a"), d.Line("l.a"), d.Line("l[1].b"))
	}
}

// Tagged keys are case-sensitive: BurntSushi/toml would decode `SEED = 7`
// into the field tagged "seed" (beside `seed = 1`, silently overriding
// it); the error names the key and the spelling meant. An untagged field
// still takes its name in any case.
func TestKeysAreCaseSensitive(t *testing.T) {
	var v struct {
		Seed  int `toml:"seed"`
		Model struct {
			Use string `toml:"use"`
		} `toml:"model"`
		Free map[string]any `toml:"free"`
		Name string
	}
	for text, want := range map[string]string{
		"seed = 1\nSEED = 7\n":      `study.toml:2: key "SEED": unknown key "SEED": keys are case-sensitive (did you mean "seed"?)`,
		"[MODEL]\nuse = \"line\"\n": `key "MODEL"`,
		"[model]\nUse = \"line\"\n": `key "model.Use"`,
	} {
		if _, err := Decode("study.toml", text, &v); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", text, err, want)
		}
	}
	if _, err := Decode("study.toml", "seed = 1\nname = \"x\"\n[free]\nSeed = 2\n", &v); err != nil {
		t.Errorf("exact keys, an untagged field and a map's own keys: %v", err)
	}
}

// A single-bracket table where a list of tables is wanted says to write
// the double brackets (audit 4).
func TestSingleBracketsForAList(t *testing.T) {
	var v struct {
		Data []struct {
			Name string `toml:"name"`
		} `toml:"data"`
	}
	if _, err := Decode("s.toml", "[data]\nname = \"d\"\n", &v); err == nil || !strings.Contains(err.Error(), "written [[data]], with double brackets") {
		t.Errorf("err %v", err)
	}
}

// No string of a decoded file holds a control character, a bidirectional
// control or invalid UTF-8: the first is named by key and line, escaped
// (audit 10: an init path with an escape sequence reached the terminal).
func TestControlCharactersRefused(t *testing.T) {
	var v struct {
		Name string           `toml:"name"`
		Init string           `toml:"init"`
		Data []map[string]any `toml:"data"`
	}
	for text, want := range map[string]string{
		"name = \"a\"\ninit = \"i\\u001b]0;pwned\\u0007.csv\"\n":              `f.toml:2: key "init": "i\x1b]0;pwned\x07.csv" has a control character`,
		"name = \"a\"\n[[data]]\nfile = \"ok\"\n[[data]]\nfile = \"x\\ty\"\n": `f.toml:5: key "data[1].file": "x\ty" has a control character`,
		"name = \"a\\u202eb\"\n": `key "name": "a\u202eb" has a control character, a bidirectional control`,
	} {
		_, err := Decode("f.toml", text, &v)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %s", text, err, want)
		}
	}
	if _, err := Decode("f.toml", "name = \"plain ünïcode\"\ninit = \"a b.csv\"\n", &v); err != nil {
		t.Errorf("clean strings: %v", err)
	}
}
