package wire

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// The names AckKind and NakCode print (the generated String methods from
// enum_names.txt): the IBA names, and Type(n) for a reserved value.
func TestAckKindNakCodeString(t *testing.T) {
	assert.Equal(t, "ACK", KindACK.String())
	assert.Equal(t, "RNR_NAK", KindRNRNak.String())
	assert.Equal(t, "NAK", KindNak.String())
	assert.Equal(t, "AckKind(2)", AckKind(2).String())
	assert.Equal(t, "AckKind(255)", AckKind(255).String())

	assert.Equal(t, "PSN_SEQUENCE_ERROR", NakPSNSequenceError.String())
	assert.Equal(t, "INVALID_REQUEST", NakInvalidRequest.String())
	assert.Equal(t, "REMOTE_ACCESS_ERROR", NakRemoteAccess.String())
	assert.Equal(t, "REMOTE_OPERATIONAL_ERROR", NakRemoteOperation.String())
	assert.Equal(t, "NakCode(4)", NakCode(4).String())
	assert.Equal(t, "NAK(NakCode(31))", NakSyndrome(31).String())
}
