package cuda

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrBadBusID matches every error of ParsePCIBusID.
var ErrBadBusID = errors.New("cuda: malformed PCIe bus id")

// PCIAddress is a PCIe function address: domain, bus, device, function.
type PCIAddress struct {
	Domain   uint32
	Bus      uint8
	Device   uint8 // 0..31
	Function uint8 // 0..7
}

// String formats the canonical lower-case form "dddd:bb:dd.f" (the domain
// widens beyond four digits only when its value needs it).
func (a PCIAddress) String() string {
	return fmt.Sprintf("%04x:%02x:%02x.%x", a.Domain, a.Bus, a.Device, a.Function)
}

// ParsePCIBusID parses a PCIe bus id as tools print it: "8A:00.0" (domain 0
// implied), "0000:8a:00.0", or the eight-digit domain of nvidia-smi,
// "00000000:8A:00.0". Hex digits may be either case; surrounding white space
// is ignored.
func ParsePCIBusID(s string) (PCIAddress, error) {
	var a PCIAddress
	bad := func(why string) (PCIAddress, error) {
		return PCIAddress{}, fmt.Errorf("%w %q: %s", ErrBadBusID, s, why)
	}
	t := strings.TrimSpace(s)
	dot := strings.LastIndexByte(t, '.')
	if dot < 0 {
		return bad("no '.' before the function number")
	}
	fn, err := parseHex(t[dot+1:], 1, 0x7)
	if err != nil {
		return bad("function: " + err.Error())
	}
	parts := strings.Split(t[:dot], ":")
	switch len(parts) {
	case 2:
		parts = append([]string{"0"}, parts...)
	case 3:
	default:
		return bad("want [domain:]bus:device.function")
	}
	dom, err := parseHex(parts[0], 8, 0xffffffff)
	if err != nil {
		return bad("domain: " + err.Error())
	}
	bus, err := parseHex(parts[1], 2, 0xff)
	if err != nil {
		return bad("bus: " + err.Error())
	}
	dev, err := parseHex(parts[2], 2, 0x1f)
	if err != nil {
		return bad("device: " + err.Error())
	}
	a.Domain, a.Bus, a.Device, a.Function = uint32(dom), uint8(bus), uint8(dev), uint8(fn)
	return a, nil
}

// NormalizePCIBusID returns the canonical form of a bus id ("0000:8a:00.0").
func NormalizePCIBusID(s string) (string, error) {
	a, err := ParsePCIBusID(s)
	if err != nil {
		return "", err
	}
	return a.String(), nil
}

// parseHex accepts 1..maxDigits hex digits (no sign, no prefix) whose value
// is at most max.
func parseHex(s string, maxDigits int, max uint64) (uint64, error) {
	if s == "" || len(s) > maxDigits {
		return 0, fmt.Errorf("want 1 to %d hex digits, got %q", maxDigits, s)
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return 0, fmt.Errorf("%q is not hex", s)
		}
	}
	v, err := strconv.ParseUint(s, 16, 64)
	if err != nil {
		return 0, err
	}
	if v > max {
		return 0, fmt.Errorf("%#x exceeds %#x", v, max)
	}
	return v, nil
}
