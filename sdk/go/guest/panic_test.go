package guest

import "testing"

// A panic names the plugin's own frame, not the runtime's, the standard
// library's, a dependency's (review 23) or the SDK's (author 22: a Go method's panic had no file or
// line, even with --verbose). The stack is the shape debug.Stack gives in
// Protect's deferred recover, of a method plugin built with kinfer build.
func TestPanicFrame(t *testing.T) {
	stack := `goroutine 1 [running]:
runtime/debug.Stack()
	runtime/debug/stack.go:26 +0x5e
github.com/kinfer/kinfer/sdk/go/guest.Protect.func1()
	github.com/kinfer/kinfer@v0.0.0/sdk/go/guest/guest.go:140 +0x5b
panic({0x5856a0, 0x5ce7b0})
	runtime/panic.go:860 +0x13a
sort.Slice(...)
	sort/slice.go:20 +0x1
gonum.org/v1/gonum/floats.Sum(...)
	gonum.org/v1/gonum@v0.16.0/floats/floats.go:700 +0x1
main.(*rwm).Tell(0x2b2100, {0x0, 0x0, 0x0})
	kinfer.local/plugin/main.go:41 +0x25
github.com/kinfer/kinfer/sdk/go/method.kinferMethodTell(0x1)
	github.com/kinfer/kinfer@v0.0.0/sdk/go/method/method.go:90 +0x2
`
	if got, want := PanicFrame([]byte(stack)), " in main.(*rwm).Tell (kinfer.local/plugin/main.go:41)"; got != want {
		t.Errorf("PanicFrame = %q, want %q", got, want)
	}
	if got := PanicFrame([]byte("goroutine 1 [running]:\ntesting.tRunner()\n\ttesting/testing.go:1 +0x1\n")); got != "" {
		t.Errorf("a stack of the standard library only: %q", got)
	}
}
