package inmem

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"time"

	"go.etcd.io/bbolt"

	"github.com/arrowhead-go/arrowhead/adapters/bolt"
	"github.com/arrowhead-go/arrowhead/ports"
)

// taskRow is a task as the embedded store keeps it, apart from the port's
// type so the file format changes only on purpose. Input and Result are
// JSON (the port says so; finish refuses a result that is not), kept as
// they are rather than base64-encoded.
type taskRow struct {
	ID        string          `json:"id"`
	Owner     string          `json:"owner"`
	Kind      string          `json:"kind"`
	Status    string          `json:"status"`
	CreatedAt time.Time       `json:"created_at"`
	UpdatedAt time.Time       `json:"updated_at"`
	Principal principalRow    `json:"principal"`
	Input     json.RawMessage `json:"input,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	Error     string          `json:"error,omitempty"`
	DueAt     time.Time       `json:"due_at,omitzero"`
	Repeat    time.Duration   `json:"repeat,omitempty"`
	Next      string          `json:"next,omitempty"`
}

type principalRow struct {
	Subject       string   `json:"sub"`
	Issuer        string   `json:"iss,omitempty"`
	Scopes        []string `json:"scopes,omitempty"`
	Authenticated bool     `json:"authenticated"`
	AllScopes     bool     `json:"all_scopes,omitempty"`
}

func toTaskRow(t ports.Task) taskRow {
	p := t.Principal
	return taskRow{ID: t.ID, Owner: t.Owner, Kind: t.Kind, Status: string(t.Status), CreatedAt: t.CreatedAt, UpdatedAt: t.UpdatedAt,
		Principal: principalRow{Subject: p.Subject, Issuer: p.Issuer, Scopes: p.Scopes, Authenticated: p.Authenticated, AllScopes: p.AllScopes},
		Input:     t.Input, Result: t.Result, Error: t.Error, DueAt: t.DueAt, Repeat: t.Repeat, Next: t.Next}
}

func (r taskRow) task() ports.Task {
	p := r.Principal
	return ports.Task{ID: r.ID, Owner: r.Owner, Kind: r.Kind, Status: ports.TaskStatus(r.Status), CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt,
		Principal: ports.Principal{Subject: p.Subject, Issuer: p.Issuer, Scopes: slices.Clone(p.Scopes), Authenticated: p.Authenticated, AllScopes: p.AllScopes},
		Input:     slices.Clone(r.Input), Result: slices.Clone(r.Result), Error: r.Error, DueAt: r.DueAt, Repeat: r.Repeat, Next: r.Next}
}

// putTask writes t into its owner's bucket, sealed under owner and id so a
// record moved to another owner or id fails its check.
func putTask(ob *bbolt.Bucket, t ports.Task) error {
	raw, err := EncodeTask(t)
	if err != nil {
		return err
	}
	return ob.Put([]byte(t.ID), bolt.Seal(sealKey(t.Owner, t.ID), raw))
}

// getTask reads the task id from the bucket of the owner whose key is
// ownerHash; found is false when it is absent.
func getTask(ob *bbolt.Bucket, ownerHash, id []byte, t *ports.Task) (found bool, err error) {
	sealed := ob.Get(id)
	if sealed == nil {
		return false, nil
	}
	*t, err = decodeTask(ownerHash, id, sealed)
	return err == nil, err
}

func decodeTask(ownerHash, id, sealed []byte) (ports.Task, error) {
	raw, err := bolt.Unseal(append(slices.Clone(ownerHash), id...), sealed)
	if err != nil {
		return ports.Task{}, err
	}
	t, err := DecodeTask(raw, string(id))
	if err != nil {
		return ports.Task{}, errors.Join(bolt.ErrCorrupt, err)
	}
	return t, nil
}

// readTasks decodes every task in an owner's bucket.
func readTasks(ob *bbolt.Bucket, ownerHash []byte) ([]ports.Task, error) {
	var out []ports.Task
	err := ob.ForEach(func(k, v []byte) error {
		t, err := decodeTask(ownerHash, k, v)
		if err != nil {
			return err
		}
		out = append(out, t)
		return nil
	})
	return out, err
}

// DumpTasks calls fn with every task in ns, the registry's namespace
// (TasksNamespace), read in one snapshot: the tasks and pending timers
// that move to the store replacing this one. It opens no registry, which
// would fire timers and fail working tasks.
func DumpTasks(ctx context.Context, ns *bolt.Namespace, fn func(ports.Task) error) error {
	return ns.View(ctx, func(root *bbolt.Bucket) error {
		owners := root.Bucket(taskOwnersKey)
		if owners == nil {
			return nil
		}
		return owners.ForEachBucket(func(k []byte) error {
			tasks, err := readTasks(owners.Bucket(k), k)
			if err != nil {
				return err
			}
			for _, t := range tasks {
				if err := fn(t); err != nil {
					return err
				}
			}
			return nil
		})
	})
}
