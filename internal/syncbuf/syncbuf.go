// Package syncbuf is a bytes.Buffer safe for concurrent writers: the log
// sink of tests whose code writes from several goroutines.
package syncbuf

import (
	"bytes"
	"sync"
)

// Buffer is a concurrency-safe log sink. The zero value is ready.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
