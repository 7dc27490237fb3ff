//go:build !cgo

package dl

import "unsafe"

// Without cgo nothing can be loaded: Open fails with an *Error that says so.

const noCgo = "this binary was built without cgo (CGO_ENABLED=0) and cannot load shared libraries"

// Flags for Open: the glibc values of the dlopen modes.
const (
	Lazy   Flags = 0x1
	Now    Flags = 0x2
	Local  Flags = 0
	Global Flags = 0x100
)

// Library is an open shared library; without cgo there is none.
type Library struct{ name string }

// Open fails: this build cannot load libraries.
func Open(flags Flags, names ...string) (*Library, error) {
	if len(names) == 0 {
		return nil, &Error{Op: "dlopen", Msg: "no library name given"}
	}
	return nil, openError(names, []string{noCgo})
}

// Name is the candidate name that loaded.
func (l *Library) Name() string { return l.name }

// Lookup fails: this build cannot load libraries.
func (l *Library) Lookup(name string) (unsafe.Pointer, error) {
	return nil, &Error{Op: "dlsym", Library: l.name, Symbol: name, Msg: noCgo}
}

// LookupVersion fails: this build cannot load libraries.
func (l *Library) LookupVersion(name, version string) (unsafe.Pointer, error) {
	return nil, &Error{Op: "dlvsym", Library: l.name, Symbol: name, Version: version, Msg: noCgo}
}

// Path fails: this build cannot load libraries.
func (l *Library) Path() (string, error) {
	return "", &Error{Op: "dlinfo", Library: l.name, Msg: noCgo}
}

// Close does nothing.
func (l *Library) Close() error { return nil }
