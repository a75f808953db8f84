//go:build race

package rt_test

const raceEnabled = true
