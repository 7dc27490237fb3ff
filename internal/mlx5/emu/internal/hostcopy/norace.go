//go:build !race

package hostcopy

const raceEnabled = false
