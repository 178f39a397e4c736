package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/arrowhead-go/arrowhead/migrations"
	"github.com/arrowhead-go/arrowhead/ports"
	"github.com/arrowhead-go/arrowhead/ports/portstest"
)

// stateSchema creates a schema private to the test with the state tables
// `arrowhead migrate` makes, and returns a superuser DSN whose search_path
// is that schema, for as many pools ("replicas") as the test opens.
func stateSchema(t *testing.T, db testDB) string {
	t.Helper()
	dsn := withParams(t, db.dsn, "search_path", db.schema(t, ""))
	pool, err := NewPool(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	cfg := migrations.Config{Columns: migrations.DefaultColumns(), State: true}
	err = pool.WithConnForTest(context.Background(), func(c *pgx.Conn) error {
		_, _, err := migrations.Apply(context.Background(), c, cfg)
		return err
	})
	if err != nil {
		t.Fatalf("migrating the state tables: %v", err)
	}
	return dsn
}

func openPGWorkingSets(t *testing.T, dsn string, l ports.WorkingSetLimits) *WorkingSets {
	t.Helper()
	pool, err := NewPool(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	w, err := NewWorkingSets(pool, l)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func TestIntegrationWorkingSetsMeetTheContract(t *testing.T) {
	db := requireDB(t)
	portstest.RunWorkingSetsContract(t, func(t *testing.T, l ports.WorkingSetLimits) ports.WorkingSets {
		return openPGWorkingSets(t, stateSchema(t, db), l)
	})
}

// TestIntegrationWorkingSetsBoundsHoldAcrossReplicas races set creations
// and pins from three pools, as three replicas would: the store-wide bound
// is never exceeded, and no pin into a shared set is lost.
func TestIntegrationWorkingSetsBoundsHoldAcrossReplicas(t *testing.T) {
	db := requireDB(t)
	dsn := stateSchema(t, db)
	l := ports.WorkingSetLimits{MaxSetsPerOwner: 2, MaxItemsPerSet: 100, MaxSetsTotal: 10}
	replicas := []*WorkingSets{openPGWorkingSets(t, dsn, l), openPGWorkingSets(t, dsn, l), openPGWorkingSets(t, dsn, l)}
	ctx := context.Background()
	item := func(s string) []ports.WorkingSetItem {
		return []ports.WorkingSetItem{{Kind: ports.PinDoc, Identifier: s + ".md"}}
	}

	var mu sync.Mutex
	var created []string
	exhausted := 0
	var wg sync.WaitGroup
	for i := range 30 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := replicas[i%3].Pin(ctx, fmt.Sprintf("owner%d", i), "s", item("a"))
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				created = append(created, fmt.Sprintf("owner%d", i))
			case errors.Is(err, ports.ErrSetsExhausted):
				exhausted++
			default:
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if len(created) != l.MaxSetsTotal || exhausted != 30-l.MaxSetsTotal {
		t.Fatalf("%d created, %d refused; want %d and %d", len(created), exhausted, l.MaxSetsTotal, 30-l.MaxSetsTotal)
	}

	// One owner racing to create many sets from every replica stays
	// within its own bound, with room in the store for more.
	for _, owner := range created[:3] {
		if err := replicas[1].Delete(ctx, owner, "s"); err != nil {
			t.Fatal(err)
		}
	}
	tooMany := 0
	for i := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := replicas[i%3].Pin(ctx, "zed", fmt.Sprintf("s%d", i), item("a"))
			mu.Lock()
			defer mu.Unlock()
			if errors.Is(err, ports.ErrTooManySets) {
				tooMany++
			} else if err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if tooMany != 6-l.MaxSetsPerOwner {
		t.Fatalf("%d of 6 racing creations refused, want %d", tooMany, 6-l.MaxSetsPerOwner)
	}

	// Pins into one set from every replica are all kept, in some order.
	var want []ports.WorkingSetItem
	for i := range 60 {
		want = append(want, item(fmt.Sprint(i))...)
	}
	shared := created[3]
	for i := range 60 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := replicas[i%3].Pin(ctx, shared, "s", item(fmt.Sprint(i))); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	got, err := replicas[2].Get(ctx, shared, "s")
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Items) != 61 {
		t.Fatalf("after 60 concurrent pins: %d items, want 61", len(got.Items))
	}
	for _, w := range want {
		if !slices.Contains(got.Items, w) {
			t.Fatalf("pin %v lost", w)
		}
	}
}

// TestIntegrationWorkingSetsRefuseDamagedRows reads a row whose items are
// not the adapter's JSON list: an error, never a different set.
func TestIntegrationWorkingSetsRefuseDamagedRows(t *testing.T) {
	db := requireDB(t)
	dsn := stateSchema(t, db)
	w := openPGWorkingSets(t, dsn, ports.WorkingSetLimits{MaxSetsPerOwner: 2, MaxItemsPerSet: 5, MaxSetsTotal: 5})
	err := w.pool.WithConnForTest(context.Background(), func(c *pgx.Conn) error {
		_, err := c.Exec(context.Background(), `INSERT INTO `+wsTable+` (owner, name, items) VALUES ('alice', 'bug', '[{"k":"shell","i":"x"}]')`)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Get(context.Background(), "alice", "bug"); !errors.Is(err, ports.ErrWorkingSetDamaged) {
		t.Fatalf("damaged row: %v", err)
	}
}

func TestIntegrationWorkingSetsHealth(t *testing.T) {
	db := requireDB(t)
	l := ports.WorkingSetLimits{MaxSetsPerOwner: 2, MaxItemsPerSet: 5, MaxSetsTotal: 5}
	if h := openPGWorkingSets(t, stateSchema(t, db), l).Health(context.Background()); h != ports.HealthOK {
		t.Fatalf("migrated: %v", h)
	}
	bare := withParams(t, db.dsn, "search_path", db.schema(t, ""))
	if h := openPGWorkingSets(t, bare, l).Health(context.Background()); h != ports.HealthDegraded {
		t.Fatalf("before migrate: %v", h)
	}
}
