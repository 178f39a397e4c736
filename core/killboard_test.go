package core_test

import (
	"testing"

	"github.com/arrowhead-go/arrowhead/core"
	"github.com/arrowhead-go/arrowhead/ports"
	"github.com/arrowhead-go/arrowhead/ports/portstest"
)

func TestLocalKillBoardContract(t *testing.T) {
	portstest.KillBoardContract(t, func(*testing.T) (ports.KillBoard, ports.KillBoard) {
		b := core.NewLocalKillBoard(nil)
		return b, b
	})
}
