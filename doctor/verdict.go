package doctor

//go:generate go run ../internal/enumgen

import "fmt"

// Verdict is the outcome of one check.
type Verdict int

// The verdicts, from best to worst; Skip means the check did not apply.
const (
	Pass Verdict = iota // the requirement is met
	Warn                // works, but slower, less safe, or only as root
	Fail                // GPU-initiated RDMA cannot work until this is fixed
	Skip                // not applicable on this machine (for example no NIC)
)

// String (generated from enum_names.txt) prints the names; MarshalText and
// UnmarshalText use the same ones, for the verdicts Pass through Skip (keep
// Skip the last).

// MarshalText writes the verdict as its upper-case name.
func (v Verdict) MarshalText() ([]byte, error) {
	if v < Pass || v > Skip {
		return nil, fmt.Errorf("marshal verdict: unknown value %d", int(v))
	}
	return []byte(v.String()), nil
}

// UnmarshalText reads a verdict name (PASS, WARN, FAIL, SKIP).
func (v *Verdict) UnmarshalText(b []byte) error {
	for x := Pass; x <= Skip; x++ {
		if x.String() == string(b) {
			*v = x
			return nil
		}
	}
	return fmt.Errorf("unmarshal verdict: unknown name %q", b)
}
