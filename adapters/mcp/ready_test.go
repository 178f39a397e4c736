package mcp

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/arrowhead-go/arrowhead/ports"
)

type dep struct {
	name string
	st   ports.HealthState
}

func (d dep) Name() string                             { return d.name }
func (d dep) Health(context.Context) ports.HealthState { return d.st }

type explained struct {
	dep
	why string
}

func (e explained) HealthReason(context.Context) (ports.HealthState, string) { return e.st, e.why }

// /ready reports each dependency's state, the reason of each that gives
// one, and is 503 when any is down.
func TestReadyShowsTheReasonsDependenciesGive(t *testing.T) {
	deps := []ports.HealthReporter{
		dep{"redis", ports.HealthOK},
		explained{dep{"embedded-store", ports.HealthDown}, "the disk is full"},
		explained{dep{"quiet", ports.HealthOK}, ""},
	}
	rec := httptest.NewRecorder()
	ready(rec, httptest.NewRequest(http.MethodGet, ReadyPath, nil), deps)
	var body struct {
		Status  string            `json:"status"`
		Checks  map[string]string `json:"checks"`
		Reasons map[string]string `json:"reasons"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatal(err)
	}
	if rec.Code != http.StatusServiceUnavailable || body.Status != "down" || body.Checks["embedded-store"] != "down" ||
		body.Checks["redis"] != "ok" || len(body.Reasons) != 1 || body.Reasons["embedded-store"] != "the disk is full" {
		t.Fatalf("/ready = %d %s", rec.Code, rec.Body)
	}
}
