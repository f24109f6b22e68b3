package wasm

import (
	"strings"
	"testing"
)

// A Go guest's panic names the author's frame, not only the SDK's frames
// that fill the tail (author 22: main.go:17 was left out). The traceback
// is the one a wasip1 Go plugin printed for an index out of range.
func TestPanicNamesThePluginsFrame(t *testing.T) {
	var w lineWriter
	w.Write([]byte(`panic: runtime error: index out of range [4] with length 4

goroutine 1 [running]:
main.spring.Eval({}, {0x2b2100, 0x1, 0x1}, {0x2b2108, 0x4, 0x4}, {0x2b2128, 0x4, 0x4})
	kinfer.local/plugin/main.go:17 +0x12
github.com/kinfer/kinfer/sdk/go/model.kinferModelEval(0x1, 0x2b2100, 0x4, 0x2b2108, 0x2b2128, 0x2b2148)
	github.com/kinfer/kinfer@v0.0.0/sdk/go/model/exports_wasip1.go:21 +0x36
`))
	got := w.lastLines()
	if !strings.Contains(got, `"panic: runtime error: index out of range [4] with length 4" in "main.spring.Eval (kinfer.local/plugin/main.go:17)" …`) {
		t.Errorf("lastLines = %s", got)
	}
	w.resetTail()
	w.Write([]byte("panic: boom\n\ngoroutine 1 [running]:\nmain.(*spring).Eval(0x1)\n\tkinfer.local/plugin/main.go:9 +0x1\n"))
	if got := w.lastLines(); !strings.Contains(got, `in "main.(*spring).Eval (kinfer.local/plugin/main.go:9)"`) {
		t.Errorf("a method's frame: %s", got)
	}
	w.resetTail()
	w.Write([]byte("panic: boom\n\ngoroutine 1 [running]:\nruntime.gopanic()\n\truntime/panic.go:1 +0x1\n"))
	if got := w.lastLines(); strings.Contains(got, " in ") {
		t.Errorf("a traceback of the runtime only named a frame: %s", got)
	}
}

// The frame is the guest's text like the rest: quoted, its quotes escaped
// (hostile 25: a plugin printed a frame that read as kinfer's advice).
func TestForgedFrameQuoted(t *testing.T) {
	var w lineWriter
	w.Write([]byte("panic: x\nmain.eval(\") NOT A PLUGIN FAULT (\")\n\tplugin.c:1\n"))
	got := w.lastLines()
	if !strings.Contains(got, `in "main.eval (plugin.c:1)"`) && !strings.Contains(got, `\"`) {
		t.Errorf("lastLines = %s", got)
	}
	if strings.Contains(got, `" NOT A PLUGIN FAULT`) && !strings.Contains(got, `\") NOT A PLUGIN FAULT`) {
		t.Errorf("a guest's quote closed the quoting: %s", got)
	}
}
