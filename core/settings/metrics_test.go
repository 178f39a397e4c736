package settings

import (
	"errors"
	"testing"
)

func TestMetricsAddr(t *testing.T) {
	for raw, want := range map[string]string{
		"":               "",
		"9464":           "127.0.0.1:9464",
		":9464":          "127.0.0.1:9464",
		"127.0.0.1:9464": "127.0.0.1:9464",
		"0.0.0.0:9464":   "0.0.0.0:9464",
		"[::1]:9464":     "[::1]:9464",
		"metrics:9464":   "metrics:9464",
	} {
		s, err := load(map[string]string{"ARROWHEAD_METRICS_ADDR": raw})
		if err != nil {
			t.Errorf("%q refused: %v", raw, err)
			continue
		}
		if got := s.MetricsListenAddr(); got != want {
			t.Errorf("%q binds %q, want %q", raw, got, want)
		}
	}
	for _, bad := range []string{"metrics", "127.0.0.1", "127.0.0.1:0", ":70000", "http://127.0.0.1:9464", "127.0.0.1:9464/metrics", "bad host:9464"} {
		_, err := load(map[string]string{"ARROWHEAD_METRICS_ADDR": bad})
		if !namesVar(err, "ARROWHEAD_METRICS_ADDR") {
			t.Errorf("%q: err = %v, want a problem naming ARROWHEAD_METRICS_ADDR", bad, err)
		}
	}
	// Never on the public listener.
	_, err := load(map[string]string{
		"ARROWHEAD_TRANSPORT": "http", "ARROWHEAD_ALLOW_INSECURE_HTTP": "true",
		"ARROWHEAD_PORT": "8000", "ARROWHEAD_METRICS_ADDR": "0.0.0.0:8000",
	})
	if !namesVar(err, "ARROWHEAD_METRICS_ADDR") {
		t.Errorf("metrics on the public port: err = %v", err)
	}
}

func namesVar(err error, name string) bool {
	var se *Error
	if !errors.As(err, &se) {
		return false
	}
	for _, p := range se.Problems {
		if p.Var == name {
			return true
		}
	}
	return false
}
