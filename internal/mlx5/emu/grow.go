package emu

// grow extends *s by one element and returns it, for a record filled in
// place field by field: an appended composite literal is built on the stack
// and copied into the slice with wide loads of its narrow stores, which
// stall on store forwarding (a per-request or per-WQE cost on the data
// path). The element is zero as long as the owner clears what it forgets
// (the callers reset their slices with clear before [:0]).
func grow[T any](s *[]T) *T {
	if len(*s) == cap(*s) {
		var zero T
		*s = append(*s, zero)
	} else {
		*s = (*s)[:len(*s)+1]
	}
	return &(*s)[len(*s)-1]
}
