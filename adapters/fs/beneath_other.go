//go:build !linux

package fs

import (
	"context"
	"os"

	"github.com/arrowhead-go/arrowhead/ports"
)

// openBeneath has no kernel support to offer outside Linux: reads take the
// portable path.
func openBeneath(*os.Root, string) *beneathRoot { return nil }

func (t *tree) readBeneath(string, int64, []byte) ([]byte, ports.FileInfo, bool, error) {
	return nil, ports.FileInfo{}, false, nil
}

func (t *tree) listBeneath(context.Context, string, int, func(string) bool) ([]ports.FileInfo, bool, bool, error) {
	return nil, false, false, nil
}
