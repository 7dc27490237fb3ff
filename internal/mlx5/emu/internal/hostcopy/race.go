//go:build race

package hostcopy

// raceEnabled: under the race detector parts are copied by copy(), which
// it instruments (it does not see the stores of ntcopy).
const raceEnabled = true
