package postgres

import (
	"context"
	"testing"

	"github.com/arrowhead-go/arrowhead/ports"
	"github.com/arrowhead-go/arrowhead/ports/portstest"
)

func openPGKillBoard(t *testing.T, dsn string) *KillBoard {
	t.Helper()
	pool, err := NewPool(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	b, err := NewKillBoard(pool, nil)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestIntegrationKillBoardMeetsTheContract runs the contract on two pools
// ("replicas") over one state database: LISTEN/NOTIFY carries the change.
func TestIntegrationKillBoardMeetsTheContract(t *testing.T) {
	db := requireDB(t)
	portstest.KillBoardContract(t, func(t *testing.T) (ports.KillBoard, ports.KillBoard) {
		dsn := stateSchema(t, db)
		return openPGKillBoard(t, dsn), openPGKillBoard(t, dsn)
	})
}
