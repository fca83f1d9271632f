package image

import "runtime"

func goarch() string { return runtime.GOARCH }
