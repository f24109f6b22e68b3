// Package floatcode writes float64 vectors into the surrogate files
// (builtin/surrogate/nn, builtin/surrogate/kriging) exactly: the IEEE 754
// bits, little-endian, in standard base64. Decoding checks the length
// before it allocates and refuses non-finite values, since the files are
// untrusted input.
package floatcode
