package common

import "fmt"

// ValidationOK is the line the BW servers print when every buffer holds the
// client's data (the reference README's wording; tests match on "Data
// received correctly from client").
const ValidationOK = "Validation successful! Data received correctly from client."

// ValidationError is the first wrong byte found by Validate.
type ValidationError struct {
	Buffer int
	Pos    int
	Value  byte
}

func (e *ValidationError) Error() string {
	return fmt.Sprintf("Validation error: buffer %d pos %d has invalid data %d", e.Buffer, e.Pos, e.Value)
}

// Validate checks that every byte of bufs[i] equals byte(i+1), the pattern
// the BW clients send for the i-th message size, and returns the first
// mismatch.
func Validate(bufs [][]byte) error {
	for i, b := range bufs {
		want := byte(i + 1)
		for pos, v := range b {
			if v != want {
				return &ValidationError{Buffer: i, Pos: pos, Value: v}
			}
		}
	}
	return nil
}
