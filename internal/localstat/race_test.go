//go:build race

package localstat

const raceEnabled = true
