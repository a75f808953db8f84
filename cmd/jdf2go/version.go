package main

import (
	"fmt"
	"runtime/debug"

	"github.com/spf13/cobra"
)

func init() { register(newVersionCmd) }

// version is the jdf2go version: set with -ldflags "-X main.version=v1.2.3",
// else the module version from the build information, else "devel".
var version = ""

func jdf2goVersion() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "devel"
}

func newVersionCmd(s *streams) *cobra.Command {
	return &cobra.Command{
		Use:     "version",
		Short:   "Print the jdf2go version",
		Example: "  jdf2go version",
		Args:    cobra.NoArgs,
		Run: func(cmd *cobra.Command, args []string) {
			fmt.Fprintf(s.out, "jdf2go %s\n", jdf2goVersion())
		},
	}
}
