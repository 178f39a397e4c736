//go:build !linux

package sandbox

import (
	"context"
	"fmt"

	"github.com/arrowhead-go/arrowhead/ports"
)

// Runner is unavailable off Linux: its limits, namespaces and process
// lifetime guarantees rest on Linux kernel features.
type Runner struct{}

var _ ports.Runner = (*Runner)(nil)

// New refuses every runner off Linux.
func New(context.Context, Config) (*Runner, error) {
	return nil, fmt.Errorf("%w: sandboxed execution needs Linux", ErrUnavailable)
}

// Name returns "".
func (*Runner) Name() string { return "" }

// Run always fails.
func (*Runner) Run(context.Context, ports.RunRequest) (ports.RunResult, error) {
	return ports.RunResult{}, ErrUnavailable
}
