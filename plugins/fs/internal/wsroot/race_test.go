//go:build race

package wsroot

const raceEnabled = true
