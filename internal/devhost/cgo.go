package devhost

// #cgo CPPFLAGS: -I${SRCDIR}/../../cuda/include
// #cgo CXXFLAGS: -std=c++17 -Wall -Wextra -Werror
// #cgo CFLAGS: -std=gnu11 -Wall -Werror
// #cgo LDFLAGS: -lpthread
import "C"
