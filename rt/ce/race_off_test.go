//go:build !race

package ce_test

const raceEnabled = false
