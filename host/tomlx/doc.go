// Package tomlx decodes TOML strictly: an unknown key, a wrong type or a
// missing required field is an error that names the file, the line and the
// key, so that a typo in a study or manifest never passes silently.
//
// It wraps github.com/BurntSushi/toml, whose MetaData reports undecoded keys
// and whose ParseError carries positions. Before decoding, a file's size,
// nesting, key paths, key count and value count are bounded (shape.go), so
// that no file can exhaust the decoder's memory or stack.
package tomlx
