package wire

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"strings"

	"go.uber.org/zap"

	"github.com/arrowhead-go/arrowhead/adapters/inproc"
	"github.com/arrowhead-go/arrowhead/adapters/postgres"
	"github.com/arrowhead-go/arrowhead/adapters/redis"
	"github.com/arrowhead-go/arrowhead/core"
	"github.com/arrowhead-go/arrowhead/core/authz"
	"github.com/arrowhead-go/arrowhead/core/settings"
	"github.com/arrowhead-go/arrowhead/ports"
)

// maxCanaryFileBytes bounds the canary file read at start.
const maxCanaryFileBytes = 1 << 20

// killBoard is where the live kill-switch rules are kept: Redis when
// ARROWHEAD_REDIS_URL is set, else the state database when
// ARROWHEAD_STATE_DSN is, else nil (the App's in-process board).
func (rt *Runtime) killBoard(ctx context.Context, clock ports.Clock) (ports.KillBoard, error) {
	s := rt.Settings
	switch {
	case rt.redis != nil:
		b, err := redis.NewKillBoard(rt.redis, "", clock)
		if err != nil {
			return nil, errors.New("ARROWHEAD_REDIS_URL: " + err.Error())
		}
		return b, nil
	case s.StateDSN != "":
		pool, err := rt.statePool(ctx, s)
		if err != nil {
			return nil, err
		}
		b, err := postgres.NewKillBoard(pool, clock)
		if err != nil {
			return nil, errors.New("ARROWHEAD_STATE_DSN: " + err.Error())
		}
		return b, nil
	}
	return nil, nil
}

// ErrNoSharedBoard is returned by KillSwitch when neither Redis nor the
// state database is configured: the rules then live in each server
// process alone, out of a command's reach.
var ErrNoSharedBoard = errors.New("no shared kill-switch board: set ARROWHEAD_REDIS_URL or ARROWHEAD_STATE_DSN (or use the admin endpoint of a running server)")

// KillSwitch assembles what `arrowhead kill` needs: an App over the shared
// board the settings name, with no family served, writing its audit lines
// to auditW and to the configured OpenTelemetry log export; close the
// returned Runtime after use (that flushes the export).
func KillSwitch(ctx context.Context, s *settings.Settings, auditW io.Writer) (_ *Runtime, err error) {
	rt := &Runtime{Settings: s}
	defer func() {
		if err != nil {
			_ = rt.Close(context.WithoutCancel(ctx))
		}
	}()
	if s.RedisURL != "" {
		client, err := redis.NewClientFromURL(s.RedisURL)
		if err != nil {
			return nil, errors.New("ARROWHEAD_REDIS_URL: " + err.Error())
		}
		rt.closers = append(rt.closers, func(context.Context) error { return client.Close() })
		rt.redis = client
	}
	board, err := rt.killBoard(ctx, ports.SystemClock{})
	if err != nil {
		return nil, err
	}
	if board == nil {
		return nil, ErrNoSharedBoard
	}
	// The throw or lift is audited as a server's calls are: a JSON line to
	// auditW and, with export configured, an OpenTelemetry log record to
	// the deployment's collector.
	tel, bridge, err := rt.openTelemetry(ctx, s, false)
	if err != nil {
		return nil, err
	}
	key, err := signer(s)
	if err != nil {
		return nil, err
	}
	sink, err := rt.auditSink(s, key, auditW, bridge)
	if err != nil {
		return nil, err
	}
	rt.Audit = sink
	rt.App, err = core.New(core.Deps{
		Settings:   s,
		Authorizer: authz.AllowAll{},
		Rates:      inproc.NewRateStore(ports.SystemClock{}),
		Audit:      sink,
		Tracer:     tel.Tracer(),
		Metrics:    tel.Metrics(),
		Clock:      ports.SystemClock{},
		KillBoard:  board,
	})
	if err != nil {
		return nil, err
	}
	return rt, nil
}

// watchKills loads the live rules before the first call is served and
// keeps them in step with the board until the runtime closes.
func (rt *Runtime) watchKills(ctx context.Context) {
	if err := rt.App.ReloadKills(ctx); err != nil {
		rt.Logger.Warn("the kill-switch board does not answer at start; its rules apply once it does", zap.String("reason", "unavailable"))
	}
	wctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	app := rt.App
	go func() { defer close(done); app.WatchKills(wctx) }()
	rt.closers = append(rt.closers, func(context.Context) error { stop(); <-done; return nil })
}

// readCanaryFile returns the canary values listed in path, one a line
// (blank lines and # comments skipped); none for an empty path. Its errors
// never name the path.
func readCanaryFile(path string) ([]string, error) {
	if path == "" {
		return nil, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, errors.New("ARROWHEAD_CANARY_FILE: the file cannot be read")
	}
	defer f.Close()
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(io.LimitReader(f, maxCanaryFileBytes+1)); err != nil {
		return nil, errors.New("ARROWHEAD_CANARY_FILE: the file cannot be read")
	}
	if buf.Len() > maxCanaryFileBytes {
		return nil, errors.New("ARROWHEAD_CANARY_FILE: the file is larger than 1 MiB")
	}
	var out []string
	sc := bufio.NewScanner(&buf)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		out = append(out, line)
	}
	return out, nil
}

// canaryCompleter refuses (and trips the caller) when a model request
// carries a canary: a request to a model is egress.
type canaryCompleter struct{ next ports.Completer }

func (c canaryCompleter) Complete(ctx context.Context, req ports.CompletionRequest) (string, error) {
	if err := core.CheckEgress(ctx, "model_request", req.System, req.Prompt); err != nil {
		return "", err
	}
	return c.next.Complete(ctx, req)
}
