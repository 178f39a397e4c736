package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/arrowhead-go/arrowhead/migrations"
	"github.com/arrowhead-go/arrowhead/ports"
)

// The task registry's statements. The table name is a constant, every value
// a bound parameter, and the owner is in every predicate but the TTL sweep's,
// which purges expired tasks over every owner.
const (
	tasksTable = migrations.TasksTable

	taskColumns = `owner, id, kind, status, principal, input, result, error, created_at, updated_at, due_at, repeat_us, next_id, job_id, started_at`

	// taskOwnerLock serialises one owner's bounded changes (a start, a
	// schedule, a finish and its eviction) across every replica; other
	// owners never wait for it. The class key is "ahta" in ASCII.
	taskOwnerLock      = `SELECT pg_advisory_xact_lock($1::int4, hashtext($2))`
	taskOwnerLockClass = 0x61687461

	taskInsert = `INSERT INTO ` + tasksTable + ` (` + taskColumns + `) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)`
	// taskGet hides a finished task past its TTL ($3 is the oldest
	// updated_at still visible).
	taskGet          = `SELECT ` + taskColumns + ` FROM ` + tasksTable + ` WHERE owner = $1 AND id = $2 AND (status = 'working' OR updated_at >= $3)`
	taskGetForUpdate = taskGet + ` FOR UPDATE`
	taskList         = `SELECT ` + taskColumns + ` FROM ` + tasksTable + ` WHERE owner = $1 AND (status = 'working' OR updated_at >= $2) ORDER BY created_at, id LIMIT $3`
	taskStatus       = `SELECT status FROM ` + tasksTable + ` WHERE owner = $1 AND id = $2`
	taskCountRunning = `SELECT count(*) FROM ` + tasksTable + ` WHERE owner = $1 AND status = 'working' AND kind <> '` + ports.TaskKindTimer + `'`
	taskCountTimers  = `SELECT count(*) FROM ` + tasksTable + ` WHERE owner = $1 AND status = 'working' AND kind = '` + ports.TaskKindTimer + `'`
	// taskClaim marks the work begun; no row means it is not working any
	// more, or began before (a rescued job of a replica that died).
	taskClaim  = `UPDATE ` + tasksTable + ` SET started_at = $3 WHERE owner = $1 AND id = $2 AND status = 'working' AND started_at IS NULL`
	taskFinish = `UPDATE ` + tasksTable + ` SET status = $3, result = $4, error = $5, updated_at = $6, next_id = $7 WHERE owner = $1 AND id = $2 AND status = 'working'`
	taskCancel = `UPDATE ` + tasksTable + ` SET status = 'cancelled', updated_at = $3 WHERE owner = $1 AND id = $2 AND status = 'working'`
	// taskEvict keeps the owner's $2 most recently finished tasks.
	taskEvict = `DELETE FROM ` + tasksTable + ` WHERE owner = $1 AND id IN (SELECT id FROM ` + tasksTable +
		` WHERE owner = $1 AND status <> 'working' ORDER BY updated_at DESC, created_at DESC, id DESC OFFSET $2)`
	// taskReconcile settles every task still working whose River job is
	// finished or gone ($1 the reason, $2 the time) and returns their
	// owners. Workers settle a task and complete its job in one
	// transaction, so this finds only what an outage or a lost replica
	// left behind.
	taskReconcile = `UPDATE ` + tasksTable + ` AS t SET status = 'failed', result = NULL, error = $1, updated_at = $2
WHERE t.status = 'working' AND NOT EXISTS (SELECT 1 FROM river_job AS j WHERE j.id = t.job_id AND j.state NOT IN ('completed', 'cancelled', 'discarded'))
RETURNING t.owner`
	taskPurgeOwner = `DELETE FROM ` + tasksTable + ` WHERE owner = $1 AND status <> 'working' AND updated_at < $2`
	taskPurgeAll   = `DELETE FROM ` + tasksTable + ` WHERE status <> 'working' AND updated_at < $1`
)

// errTaskDamaged is a row this adapter did not write.
var errTaskDamaged = errors.New("a task in the state database is damaged")

// taskPrincipal is the principal as stored, apart from the port's type so
// the stored shape changes only on purpose.
type taskPrincipal struct {
	Subject       string   `json:"sub"`
	Issuer        string   `json:"iss,omitempty"`
	Scopes        []string `json:"scopes,omitempty"`
	Authenticated bool     `json:"authenticated"`
	AllScopes     bool     `json:"all_scopes,omitempty"`
}

// storedTask is a task and what only the adapter needs of its row.
type storedTask struct {
	ports.Task
	jobID   int64
	started bool
}

// insertArgs are taskInsert's arguments for t.
func insertArgs(t ports.Task, jobID int64) ([]any, error) {
	p := t.Principal
	principal, err := json.Marshal(taskPrincipal{Subject: p.Subject, Issuer: p.Issuer, Scopes: p.Scopes, Authenticated: p.Authenticated, AllScopes: p.AllScopes})
	if err != nil {
		return nil, err
	}
	var due *time.Time
	if !t.DueAt.IsZero() {
		due = &t.DueAt
	}
	return []any{t.Owner, t.ID, t.Kind, string(t.Status), principal, t.Input, t.Result, t.Error,
		t.CreatedAt, t.UpdatedAt, due, t.Repeat.Microseconds(), t.Next, jobID, nil}, nil
}

// scanTask reads one row of taskColumns.
func scanTask(row pgx.Row) (storedTask, error) {
	var (
		st        storedTask
		status    string
		principal []byte
		due       *time.Time
		repeatUS  int64
		jobID     *int64
		startedAt *time.Time
	)
	t := &st.Task
	if err := row.Scan(&t.Owner, &t.ID, &t.Kind, &status, &principal, &t.Input, &t.Result, &t.Error,
		&t.CreatedAt, &t.UpdatedAt, &due, &repeatUS, &t.Next, &jobID, &startedAt); err != nil {
		return st, err
	}
	var p taskPrincipal
	if err := json.Unmarshal(principal, &p); err != nil {
		return st, errTaskDamaged
	}
	t.Status = ports.TaskStatus(status)
	t.Principal = ports.Principal{Subject: p.Subject, Issuer: p.Issuer, Scopes: slices.Clone(p.Scopes), Authenticated: p.Authenticated, AllScopes: p.AllScopes}
	t.CreatedAt, t.UpdatedAt = t.CreatedAt.UTC(), t.UpdatedAt.UTC()
	if due != nil {
		t.DueAt = due.UTC()
	}
	t.Repeat = time.Duration(repeatUS) * time.Microsecond
	if jobID != nil {
		st.jobID = *jobID
	}
	st.started = startedAt != nil
	return st, nil
}

// lockOwner takes the owner's transaction-scoped lock.
func lockOwner(ctx context.Context, tx pgx.Tx, owner string) error {
	_, err := tx.Exec(ctx, taskOwnerLock, int32(taskOwnerLockClass), owner)
	return err
}

// countTasks runs one of the count statements for owner.
func countTasks(ctx context.Context, tx pgx.Tx, query, owner string) (int, error) {
	var n int
	err := tx.QueryRow(ctx, query, owner).Scan(&n)
	return n, err
}
