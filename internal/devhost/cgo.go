package devhost

// #cgo CPPFLAGS: -I${SRCDIR}/../../cuda/include -I${SRCDIR}/../../cuda/include/common -I${SRCDIR}/../../cuda/include/device -I${SRCDIR}/../../cuda/include/host
// #cgo CXXFLAGS: -std=c++17 -Wall -Wextra -Werror
// #cgo CFLAGS: -std=gnu11 -Wall -Werror
// #cgo LDFLAGS: -lpthread
import "C"

// cBool is b as the 0/1 int the C wrappers take for a flag.
func cBool(b bool) C.int {
	if b {
		return 1
	}
	return 0
}
