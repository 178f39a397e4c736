package boltstores

import (
	"context"
	"errors"
	"slices"

	"go.etcd.io/bbolt"

	"github.com/arrowhead-go/arrowhead/adapters/bolt"
	"github.com/arrowhead-go/arrowhead/adapters/taskrules"
	"github.com/arrowhead-go/arrowhead/ports"
)

// putTask writes t into its owner's bucket, sealed under owner and id so a
// record moved to another owner or id fails its check.
func putTask(ob *bbolt.Bucket, t ports.Task) error {
	raw, err := taskrules.EncodeTask(t)
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
	t, err := taskrules.DecodeTask(raw, string(id))
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
