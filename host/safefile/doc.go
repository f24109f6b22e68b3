// Package safefile opens the files that studies and plugin manifests name
// (plugin modules, datasets, TOML files) without trusting them: a file must
// be a regular file of bounded size, checked before it is opened and again
// on the open descriptor (so a named pipe cannot block the host and a swap
// between the two checks is caught), and it is read through a limit, never
// whole (a /proc file reports size 0). Inside keeps a path named by a
// manifest inside the manifest's folder, lexically and after resolving
// symbolic links.
package safefile
