//go:build race

package ce_test

const raceEnabled = true
