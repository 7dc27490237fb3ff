package doctor

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

var verdictNames = [...]string{Pass: "PASS", Warn: "WARN", Fail: "FAIL", Skip: "SKIP"}

// String returns the upper-case name ("PASS"), or Verdict(n) for a value
// outside the four.
func (v Verdict) String() string {
	if v >= 0 && int(v) < len(verdictNames) {
		return verdictNames[v]
	}
	return fmt.Sprintf("Verdict(%d)", int(v))
}

// MarshalText writes the verdict as its upper-case name.
func (v Verdict) MarshalText() ([]byte, error) {
	if v < 0 || int(v) >= len(verdictNames) {
		return nil, fmt.Errorf("marshal verdict: unknown value %d", int(v))
	}
	return []byte(verdictNames[v]), nil
}

// UnmarshalText reads a verdict name (PASS, WARN, FAIL, SKIP).
func (v *Verdict) UnmarshalText(b []byte) error {
	for i, n := range verdictNames {
		if n == string(b) {
			*v = Verdict(i)
			return nil
		}
	}
	return fmt.Errorf("unmarshal verdict: unknown name %q", b)
}
