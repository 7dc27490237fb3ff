package dl

import (
	"errors"
	"strings"
)

// Flags are dlopen modes: Now or Lazy, or'ed with Local or Global.
type Flags int

// ErrClosed is matched (errors.Is) by a lookup on a closed Library.
var ErrClosed = errors.New("library is closed")

// Error is a failed dynamic-loader operation.
type Error struct {
	Op      string   // "dlopen", "dlsym", "dlvsym", "dlinfo" or "dlclose"
	Library string   // the library name (for dlopen, the first candidate)
	Tried   []string // dlopen: every candidate name, in order
	Symbol  string   // dlsym/dlvsym: the symbol
	Version string   // dlvsym: the version node
	Msg     string   // the dynamic loader's text (dlerror), or why nothing was tried
	err     error    // ErrClosed, or nil
}

// Error names the operation, the library (and symbol@version) and the
// loader's text.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Op)
	b.WriteByte(' ')
	if e.Symbol != "" {
		b.WriteString(e.Symbol)
		if e.Version != "" {
			b.WriteByte('@')
			b.WriteString(e.Version)
		}
		b.WriteString(" in ")
	}
	b.WriteString(e.Library)
	if len(e.Tried) > 1 {
		b.WriteString(" (tried ")
		b.WriteString(strings.Join(e.Tried, ", "))
		b.WriteByte(')')
	}
	b.WriteString(": ")
	b.WriteString(e.Msg)
	return b.String()
}

// Unwrap returns ErrClosed for an operation on a closed Library.
func (e *Error) Unwrap() error { return e.err }

func openError(names, msgs []string) *Error {
	return &Error{
		Op:      "dlopen",
		Library: names[0],
		Tried:   append([]string(nil), names...),
		Msg:     strings.Join(msgs, "; "),
	}
}
