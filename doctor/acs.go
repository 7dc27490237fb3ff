package doctor

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
)

// PCI Express extended capabilities (PCIe base spec, section 7.6): the list
// starts at config offset 0x100; each header is a little-endian dword with
// the capability ID in bits 15:0, the version in 19:16 and the next offset in
// 31:20.
const (
	pciExtCapStart   = 0x100
	pciExtCapIDACS   = 0x000d
	acsCapRegOffset  = 0x4 // ACS Capability register (16 bits)
	acsCtrlRegOffset = 0x6 // ACS Control register (16 bits)
	pciConfigMax     = 4096
)

// ACS control register bits (PCIe base spec, ACS Extended Capability).
const (
	ACSSourceValidation    uint16 = 1 << 0 // SV
	ACSTranslationBlocking uint16 = 1 << 1 // TB
	ACSP2PRequestRedirect  uint16 = 1 << 2 // RR
	ACSP2PCompletionRedir  uint16 = 1 << 3 // CR
	ACSUpstreamForwarding  uint16 = 1 << 4 // UF
	ACSP2PEgressControl    uint16 = 1 << 5 // EC
	ACSDirectTranslatedP2P uint16 = 1 << 6 // DT
)

// ACSRedirectMask holds the control bits that send peer-to-peer traffic up
// to the root complex (or block it) instead of letting a switch route it
// from the NIC to the GPU directly.
const ACSRedirectMask = ACSP2PRequestRedirect | ACSP2PCompletionRedir | ACSUpstreamForwarding | ACSP2PEgressControl

var acsBitNames = []struct {
	bit  uint16
	name string
}{
	{ACSSourceValidation, "SrcValid"},
	{ACSTranslationBlocking, "TransBlk"},
	{ACSP2PRequestRedirect, "ReqRedir"},
	{ACSP2PCompletionRedir, "CmpltRedir"},
	{ACSUpstreamForwarding, "UpstreamFwd"},
	{ACSP2PEgressControl, "EgressCtrl"},
	{ACSDirectTranslatedP2P, "DirectTrans"},
}

// ACSNames lists the names of the set bits of an ACS control value.
func ACSNames(ctrl uint16) string {
	var s []string
	for _, b := range acsBitNames {
		if ctrl&b.bit != 0 {
			s = append(s, b.name)
		}
	}
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ",")
}

// ErrNoExtendedConfig is matched by ParseACS's error when the config space
// given is only the 256-byte legacy part (or less): sysfs shows an
// unprivileged reader only the first 64 bytes.
var ErrNoExtendedConfig = errors.New("PCIe extended configuration space not readable")

// ErrBadCapList is matched when the extended capability list is malformed.
var ErrBadCapList = errors.New("malformed PCIe extended capability list")

// ACS is the ACS capability of one PCIe function.
type ACS struct {
	Offset  int    // config-space offset of the capability header
	Cap     uint16 // ACS Capability register
	Control uint16 // ACS Control register
}

// Redirects returns the control bits that break direct peer-to-peer routing.
func (a ACS) Redirects() uint16 { return a.Control & ACSRedirectMask }

// ParseACS walks the extended capability list of a PCI config space image
// (the binary sysfs "config" file) to the ACS capability. found is false
// when the function has no ACS capability.
func ParseACS(config []byte) (acs ACS, found bool, err error) {
	if len(config) <= pciExtCapStart {
		return ACS{}, false, fmt.Errorf("parse ACS: %d bytes of config space: %w", len(config), ErrNoExtendedConfig)
	}
	if len(config) > pciConfigMax {
		config = config[:pciConfigMax]
	}
	seen := map[int]bool{}
	off := pciExtCapStart
	for off != 0 {
		if off < pciExtCapStart || off%4 != 0 || off+4 > len(config) {
			return ACS{}, false, fmt.Errorf("parse ACS: capability at 0x%x: %w", off, ErrBadCapList)
		}
		if seen[off] {
			return ACS{}, false, fmt.Errorf("parse ACS: loop at 0x%x: %w", off, ErrBadCapList)
		}
		seen[off] = true
		hdr := binary.LittleEndian.Uint32(config[off:])
		if hdr == 0 || hdr == 0xffffffff {
			// No extended capabilities at all (or the device is gone).
			return ACS{}, false, nil
		}
		if hdr&0xffff == pciExtCapIDACS {
			if off+acsCtrlRegOffset+2 > len(config) {
				return ACS{}, false, fmt.Errorf("parse ACS: capability at 0x%x truncated: %w", off, ErrBadCapList)
			}
			return ACS{
				Offset:  off,
				Cap:     binary.LittleEndian.Uint16(config[off+acsCapRegOffset:]),
				Control: binary.LittleEndian.Uint16(config[off+acsCtrlRegOffset:]),
			}, true, nil
		}
		off = int(hdr >> 20)
	}
	return ACS{}, false, nil
}
