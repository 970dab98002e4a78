package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// version and commit are set by the linker at release time (-X main.version=...).
var (
	version = ""
	commit  = ""
)

// appVersion is the stamped version, else the module version go install recorded, else "dev".
func appVersion() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}

// versionString is what lifecyclesim version prints.
func versionString() string {
	s := "lifecyclesim " + appVersion()
	if commit != "" {
		s += " (commit " + commit + ")"
	}
	return fmt.Sprintf("%s %s %s/%s", s, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}
