//go:build !race

package kindgen

const raceEnabled = false
