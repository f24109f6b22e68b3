//go:build !unix

package designrun

// oNoFollow: no such flag; openOwn's Lstat and descriptor checks remain.
const oNoFollow = 0
