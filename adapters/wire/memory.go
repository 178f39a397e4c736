package wire

import (
	"errors"
	"fmt"

	"github.com/arrowhead-go/arrowhead/adapters/inmem"
	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/core/settings"
	"github.com/arrowhead-go/arrowhead/ports"
)

// openMemory opens the memory family's backend when the profile serves the
// family: the embedded store's memory namespace by default. nil when the
// family is not served.
func (rt *Runtime) openMemory(s *settings.Settings) (ports.MemoryBackend, error) {
	if !serves(s, catalog.FamilyMemory) {
		return nil, nil
	}
	if s.MemoryDSN != "" {
		// Refused at start-up rather than silently keeping memories on
		// this machine when the operator asked for shared storage.
		return nil, errors.New("ARROWHEAD_MEMORY_DSN: the PostgreSQL memory backend is not available in this build; unset it to use the embedded store")
	}
	store, err := rt.embeddedStore(s)
	if err != nil {
		return nil, err
	}
	ns, err := store.Namespace(inmem.MemoryNamespace)
	if err != nil {
		return nil, fmt.Errorf("ARROWHEAD_DATA_DIR: %w", err)
	}
	return inmem.NewMemoryStore(ns), nil
}
