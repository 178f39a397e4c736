package tasktools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/core/tools/docs"
	"github.com/arrowhead-go/arrowhead/ports"
)

type scanCorpusAsyncInput struct {
	PathPrefix string `json:"path_prefix,omitempty" description:"Only documents under this prefix." maxLength:"$path"`
}

type startOutput struct {
	TaskID string `json:"task_id" description:"The task handle: poll it with task_get."`
	Status string `json:"status" description:"The task's state." enum:"working,completed,failed,cancelled"`
}

// scanCorpusAsync defines scan_corpus_async.
var scanCorpusAsync = catalog.Define[scanCorpusAsyncInput, startOutput](catalog.ToolDef{
	Name:    "scan_corpus_async",
	Scope:   "docs:scan",
	Ceiling: catalog.Ceiling{Var: "ARROWHEAD_TASK_START_PER_MINUTE", Default: 10, About: "Background tasks (scan_corpus_async) a caller may start per minute: starting is expensive, polling cheap."},
	Description: "Start a background secrets-and-PII scan of the corpus (or a path prefix) and return a task handle at once. " +
		"Poll it with task_get(task_id=...) and cancel it with task_update(task_id=..., action=\"cancel\"). " +
		"Example: scan_corpus_async(path_prefix=\"exports/\")",
	Annotations: catalog.Annotations{Title: "Start a background scan"},
})

// scanInput is a scan task's recorded input.
type scanInput struct {
	PathPrefix string `json:"path_prefix"`
}

func (h *handles) startScan(ctx context.Context, call catalog.Call, in scanCorpusAsyncInput) (*catalog.Reply[startOutput], error) {
	if _, err := catalog.Owner(call.Principal); err != nil {
		return nil, err
	}
	prefix, err := catalog.CleanPrefix(in.PathPrefix)
	if err != nil {
		return nil, err
	}
	input, err := json.Marshal(scanInput{PathPrefix: prefix})
	if err != nil {
		return nil, catalog.Failed("The scan could not be started.").WithCause(err)
	}
	// The principal is recorded as authorized now: the work runs as it,
	// on whichever worker claims the task.
	task, err := h.tasks.Start(ctx, ports.NewTask{Kind: ports.TaskKindScan, Principal: call.Principal, Input: input})
	if err != nil {
		return nil, refusal(err)
	}
	return catalog.Answer(startOutput{TaskID: task.ID, Status: string(task.Status)},
		fmt.Sprintf("Started scan task %s (%s). Poll it with task_get.", task.ID, task.Status)), nil
}

// Workers is the background work of the family's task kinds, for the
// registry to run: scanner is doc_scan's work over the corpus.
func Workers(scanner docs.Scanner) map[string]ports.TaskWork {
	return map[string]ports.TaskWork{ports.TaskKindScan: scanWork(scanner)}
}

// errScanFailed is the caller-safe reason of a scan that broke on
// something other than the caller's input.
var errScanFailed = errors.New("the scan could not be completed")

// scanWork runs one scan task: doc_scan's work as the task's principal,
// checking for cancellation before each document.
func scanWork(scanner docs.Scanner) ports.TaskWork {
	return func(ctx context.Context, run ports.TaskRun) ([]byte, error) {
		var in scanInput
		if err := json.Unmarshal(run.Task.Input, &in); err != nil {
			return nil, errScanFailed
		}
		prefix, err := catalog.CleanPrefix(in.PathPrefix)
		if err != nil {
			return nil, errScanFailed
		}
		scanCtx, cancel := context.WithTimeout(ctx, ScanMaxDuration)
		defer cancel()
		rep, err := scanner.Scan(scanCtx, run.Task.Principal, prefix, run.Check)
		if cerr := ctx.Err(); cerr != nil {
			return nil, cerr // the registry is closing: the task is interrupted
		}
		if err != nil {
			if errors.Is(err, ports.ErrTaskCancelled) {
				return nil, err
			}
			if te, ok := catalog.AsToolError(err); ok && !te.Kind.IsFailure() {
				return nil, errors.New(te.Message)
			}
			return nil, errScanFailed
		}
		return boundedResult(rep.Output())
	}
}

// boundedResult encodes a scan's output within MaxResultBytes, dropping
// findings from the end (and saying so) until it fits.
func boundedResult(out docs.ScanOutput) ([]byte, error) {
	raw, err := json.Marshal(out)
	for err == nil && len(raw) > MaxResultBytes && len(out.Findings) > 0 {
		out.Findings = out.Findings[:len(out.Findings)/2]
		if !slices.Contains(out.Truncated, "result") {
			out.Truncated = append(out.Truncated, "result")
		}
		raw, err = json.Marshal(out)
	}
	if err != nil || len(raw) > MaxResultBytes {
		return nil, errScanFailed
	}
	return raw, nil
}
