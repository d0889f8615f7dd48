//go:build !race

package wsroot

const raceEnabled = false
