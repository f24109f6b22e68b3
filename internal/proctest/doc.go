// Package proctest holds test helpers for tests that start processes and
// check that they are stopped: a fake compiler that never ends and has a
// child of its own (as clang has clang -cc1), the wait for that child's
// process id, and the check that a process has ended. Tests of
// host/build and of the kinfer command share them. Unix only.
package proctest
