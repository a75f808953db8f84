//go:build !linux

package rt

// fdIsTerminal reports false where the terminal check is not implemented: the progress bar
// then stays off unless asked for, and draws one line per update.
func fdIsTerminal(fd uintptr) bool { return false }
