package sqlite_test

import (
	"testing"

	"github.com/arrowhead-go/arrowhead/adapters/sqlite"
	"github.com/arrowhead-go/arrowhead/ports"
	"github.com/arrowhead-go/arrowhead/ports/portstest"
)

func openWorkingSets(t testing.TB, s *sqlite.Store, l ports.WorkingSetLimits) *sqlite.WorkingSets {
	t.Helper()
	w, err := sqlite.NewWorkingSets(s, l)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func TestWorkingSetsContract(t *testing.T) {
	portstest.RunWorkingSetsContract(t, func(t *testing.T, l ports.WorkingSetLimits) ports.WorkingSets {
		return openWorkingSets(t, openStore(t, t.TempDir()), l)
	})
}
