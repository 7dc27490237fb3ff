//go:build cgo

package docasdk

import (
	"github.com/gdaki/gpunetio/internal/docasdk/fakesdk"
)

// fakeSDK is the stand-in SDK of package fakesdk (its C sources are in
// fakesdk/csrc), with the short names these tests use.
type fakeSDK struct{ *fakesdk.SDK }

// buildFake compiles the fake under root. skip is set when there is no C
// compiler.
func buildFake(root string) (*fakeSDK, string, error) {
	s, skip, err := fakesdk.Build(root)
	if s == nil {
		return nil, skip, err
	}
	return &fakeSDK{s}, "", nil
}

// full is the directory of the complete fake.
func (f *fakeSDK) full() string { return f.Full() }

// without is a directory holding the fake minus library lib.
func (f *fakeSDK) without(lib string) (string, error) { return f.Without(lib) }

// hiding is a directory holding the fake with library lib linked so that
// it does not export syms.
func (f *fakeSDK) hiding(lib string, syms ...string) (string, error) { return f.Hiding(lib, syms...) }

// callLog reads the fake's call log (FAKE_DOCA_LOG).
type callLog struct{ path string }

func (c *callLog) log() *fakesdk.CallLog { return &fakesdk.CallLog{Path: c.path} }

func (c *callLog) lines() []string { return c.log().Lines() }

func (c *callLog) mark() int { return c.log().Mark() }

func (c *callLog) since(mark int) []string { return c.log().Since(mark) }
