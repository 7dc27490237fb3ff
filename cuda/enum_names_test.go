package cuda

import "testing"

// The names MemoryType prints (the generated String from enum_names.txt),
// and the form of a value cuda.h may add later.
func TestMemoryTypeString(t *testing.T) {
	for _, tc := range []struct {
		v    MemoryType
		want string
	}{
		{MemoryTypeHost, "host"},
		{MemoryTypeDevice, "device"},
		{MemoryTypeArray, "array"},
		{MemoryTypeUnified, "unified"},
		{0, "MemoryType(0)"},
		{5, "MemoryType(5)"},
		{0xffffffff, "MemoryType(4294967295)"},
	} {
		if got := tc.v.String(); got != tc.want {
			t.Errorf("MemoryType(%d).String() = %q, want %q", uint32(tc.v), got, tc.want)
		}
	}
}
