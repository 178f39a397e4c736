// Command loadtest drives N concurrent MCP clients against a streamable-HTTP
// endpoint and reports throughput, latency percentiles, errors and
// rate-limited calls: the Go counterpart of the seed's scripts/loadtest.py.
//
// Against a running server:
//
//	go run ./cmd/loadtest -url http://127.0.0.1:8000/mcp -clients 32 -duration 20s
//
// Side by side, in one run: the guarded calculate (the full Arrowhead chain
// behind the real HTTP adapter) and the same arithmetic registered bare on
// mcp-go with no guards, each served on loopback by a process of its own
// (this program again, with -serve), interleaved round by round, at one
// client (the p50 difference) and at -clients (the throughput ratio, and
// each server's CPU per call):
//
//	go run ./cmd/loadtest -compare -clients 32 -duration 20s
//
// The servers run apart from the clients, as a deployed server does: in
// one process the clients' goroutines and garbage would share the server's
// scheduler and collector, and what the server under test costs could not
// be told from what its clients cost.
//
// One side alone, to profile it: it prints the URL it serves, to drive
// with -url, and serves until its stdin ends (Ctrl-D at a terminal):
//
//	go run ./cmd/loadtest -serve guarded -cpuprofile guarded.prof
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	mcpadapter "github.com/arrowhead-go/arrowhead/adapters/mcp"
	"github.com/arrowhead-go/arrowhead/adapters/wire"
	"github.com/arrowhead-go/arrowhead/core/security"
	"github.com/arrowhead-go/arrowhead/core/settings"
	"github.com/arrowhead-go/arrowhead/ports"
)

type options struct {
	url      string
	token    string
	clients  int
	duration time.Duration
	tool     string
	expr     string
	legacy   bool
	compare  bool
	rounds   int
	serve    string
}

func main() {
	var o options
	flag.StringVar(&o.url, "url", "http://127.0.0.1:8000/mcp", "streamable-HTTP endpoint")
	flag.StringVar(&o.token, "token", os.Getenv("ARROWHEAD_LOAD_TOKEN"), "bearer token (default $ARROWHEAD_LOAD_TOKEN)")
	flag.IntVar(&o.clients, "clients", 32, "concurrent clients")
	flag.DurationVar(&o.duration, "duration", 20*time.Second, "how long each measurement runs")
	flag.StringVar(&o.tool, "tool", "calculate", "tool to call")
	flag.StringVar(&o.expr, "expression", "2 * (3 + 4)", "calculate expression")
	flag.BoolVar(&o.legacy, "legacy", false, "use the initialize leg instead of 2026-07-28")
	flag.BoolVar(&o.compare, "compare", false, "serve guarded and bare calculate in-process and compare them")
	flag.IntVar(&o.rounds, "rounds", 4, "alternating rounds per side in -compare mode")
	flag.StringVar(&o.serve, "serve", "", "used by -compare: serve one side (guarded or bare) on loopback, print its URL, and stop when stdin closes")
	// With -compare the profiles are of the clients; to profile a server,
	// run it alone with -serve and these flags, and drive it with -url.
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of this process's whole run to this file")
	mutexprofile := flag.String("mutexprofile", "", "write a mutex contention profile of this process's whole run to this file")
	blockprofile := flag.String("blockprofile", "", "write a blocking profile of this process's whole run to this file")
	flag.Parse()
	for _, p := range []struct {
		path, name string
		enable     func()
	}{
		{*mutexprofile, "mutex", func() { runtime.SetMutexProfileFraction(1) }},
		{*blockprofile, "block", func() { runtime.SetBlockProfileRate(int(time.Microsecond)) }},
	} {
		if p.path == "" {
			continue
		}
		p.enable()
		defer writeProfile(p.name, p.path)
	}
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "loadtest:", err)
			os.Exit(1)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, "loadtest:", err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}
	runIt := run
	if o.serve != "" {
		runIt = func(ctx context.Context, o options, out io.Writer) error {
			return serveSide(ctx, o.serve, os.Stdin, out)
		}
	}
	if err := runIt(context.Background(), o, os.Stdout); err != nil {
		pprof.StopCPUProfile()
		fmt.Fprintln(os.Stderr, "loadtest:", err)
		os.Exit(1)
	}
}

// writeProfile writes the named runtime profile (mutex or block
// contention: what a CPU profile cannot show) to path.
func writeProfile(name, path string) {
	f, err := os.Create(path)
	if err == nil {
		err = pprof.Lookup(name).WriteTo(f, 0)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "loadtest:", err)
	}
}

func run(ctx context.Context, o options, out io.Writer) error {
	if !o.compare {
		rep, err := drive(ctx, o.url, o, nil)
		if err != nil {
			return err
		}
		rep.print(out, "target")
		return nil
	}
	guarded, err := startServer("guarded")
	if err != nil {
		return err
	}
	defer guarded.stop()
	bare, err := startServer("bare")
	if err != nil {
		return err
	}
	defer bare.stop()

	// Warm both servers, then measure at one client (latency: the
	// guard chain's cost per call) and at o.clients (throughput: its cost
	// under contention).
	warm := o
	warm.duration = min(o.duration/4, 2*time.Second)
	for _, srv := range []*sideServer{guarded, bare} {
		if _, err := drive(ctx, srv.url, warm, nil); err != nil {
			return fmt.Errorf("warm-up: %w", err)
		}
	}
	one := o
	one.clients = 1
	g1, b1, err := compareRounds(ctx, guarded, bare, one)
	if err != nil {
		return err
	}
	gN, bN, err := compareRounds(ctx, guarded, bare, o)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "1 client:\n")
	merge(g1).print(out, "guarded")
	merge(b1).print(out, "bare")
	fmt.Fprintf(out, "guarded-bare p50, median of %d rounds: %+.3f ms (target <= +0.05 ms)\n", o.rounds,
		medianOf(g1, b1, func(g, b report) float64 { return float64(g.pct(0.50)-b.pct(0.50)) / 1e6 }))
	fmt.Fprintf(out, "%d clients:\n", o.clients)
	merge(gN).print(out, "guarded")
	merge(bN).print(out, "bare")
	fmt.Fprintf(out, "guarded/bare throughput, median of %d rounds: %.3f (target >= 0.92)\n", o.rounds,
		medianOf(gN, bN, func(g, b report) float64 { return g.throughput() / b.throughput() }))
	fmt.Fprintf(out, "guarded/bare server CPU per call, median of %d rounds: %.3f\n", o.rounds,
		medianOf(gN, bN, func(g, b report) float64 { return g.serverCPUPerCall().Seconds() / b.serverCPUPerCall().Seconds() }))
	// The same ratio per CPU second (the clients' and the server's): when
	// the machine is shared, the CPU the two processes got varies from
	// round to round, and the calls per CPU second do not.
	fmt.Fprintf(out, "guarded/bare calls per CPU second (clients and server), median of %d rounds: %.3f\n", o.rounds,
		medianOf(gN, bN, func(g, b report) float64 { return g.perCPU() / b.perCPU() }))
	return nil
}

// compareRounds alternates guarded and bare runs for o.rounds rounds,
// switching which side goes first each round so neither benefits from
// running in a quieter moment.
func compareRounds(ctx context.Context, g, b *sideServer, o options) (guarded, bare []report, err error) {
	for i := 0; i < o.rounds; i++ {
		order := []*sideServer{g, b}
		if i%2 == 1 {
			order = []*sideServer{b, g}
		}
		for _, srv := range order {
			r, err := drive(ctx, srv.url, o, srv.cpu)
			if err != nil {
				return nil, nil, fmt.Errorf("driving the %s server: %w", srv.side, err)
			}
			slices.Sort(r.latencies)
			if srv == g {
				guarded = append(guarded, r)
			} else {
				bare = append(bare, r)
			}
		}
	}
	return guarded, bare, nil
}

// medianOf is the median over rounds of f(guarded round, bare round): the
// two sides of a round ran back to back, under the same load.
func medianOf(g, b []report, f func(g, b report) float64) float64 {
	vs := make([]float64, len(g))
	for i := range g {
		vs[i] = f(g[i], b[i])
	}
	slices.Sort(vs)
	if len(vs)%2 == 1 {
		return vs[len(vs)/2]
	}
	return (vs[len(vs)/2-1] + vs[len(vs)/2]) / 2
}

// guardedHandler is the full application (profile core, auth off, rate
// limiting on with a ceiling the load cannot reach, audit to /dev/null,
// every directory it keeps under one temporary directory that stop
// removes) behind the real HTTP adapter, at mcpadapter.EndpointPath.
func guardedHandler(ctx context.Context) (_ http.Handler, _ func(), err error) {
	dir, err := os.MkdirTemp("", "arrowhead-loadtest-")
	if err != nil {
		return nil, nil, err
	}
	var closers []func()
	stop := func() {
		for _, c := range slices.Backward(closers) {
			c()
		}
		_ = os.RemoveAll(dir)
	}
	defer func() {
		if err != nil {
			stop()
		}
	}()
	env := map[string]string{
		"ARROWHEAD_PROFILE":              "core",
		"ARROWHEAD_TRANSPORT":            "http",
		"ARROWHEAD_ALLOW_INSECURE_HTTP":  "true",
		"ARROWHEAD_CALCULATE_PER_MINUTE": "1000000",
	}
	for _, v := range []string{"ARROWHEAD_JAIL_ROOT", "ARROWHEAD_DOCS_ROOT", "ARROWHEAD_REPO_ROOT",
		"ARROWHEAD_EXEC_WORKDIR", "ARROWHEAD_MEMORY_ROOT", "ARROWHEAD_DATA_DIR"} {
		env[v] = filepath.Join(dir, strings.ToLower(strings.TrimPrefix(v, "ARROWHEAD_")))
		if err := os.Mkdir(env[v], 0o700); err != nil {
			return nil, nil, err
		}
	}
	s, err := settings.Load(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err != nil {
		return nil, nil, err
	}
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		return nil, nil, err
	}
	closers = append(closers, func() { devnull.Close() })
	rt, err := wire.Build(ctx, s, wire.Options{AuditWriter: devnull})
	if err != nil {
		return nil, nil, err
	}
	closers = append(closers, func() { _ = rt.Close(context.Background()) })
	srv := mcpadapter.New(rt.App, mcpadapter.Options{
		Name: "arrowhead", Version: wire.Version,
		Principal: func(context.Context) ports.Principal { return ports.Operator() },
	})
	h, _ := srv.HTTPHandler(mcpadapter.HTTPOptions{Stateless: true})
	return h, stop, nil
}

// servingPrefix starts the line on which a -serve process announces the
// URL it serves.
const servingPrefix = "serving "

// cpuPath is where a -serve process answers with the CPU time (user and
// system, in nanoseconds) it has used so far.
const cpuPath = "/loadtest/cpu"

// serveSide serves one side of -compare (guarded or bare) on loopback,
// writes its URL to out, and serves until stdin reaches its end: when the
// process that started it closes the pipe, or dies.
func serveSide(ctx context.Context, side string, stdin io.Reader, out io.Writer) error {
	var (
		h    http.Handler
		path string
		stop = func() {}
	)
	switch side {
	case "guarded":
		var err error
		if h, stop, err = guardedHandler(ctx); err != nil {
			return err
		}
		path = mcpadapter.EndpointPath
	case "bare":
		h, path = bareHandler(), bareEndpointPath
	default:
		return fmt.Errorf("-serve %q: want guarded or bare", side)
	}
	defer stop()
	mux := http.NewServeMux()
	mux.Handle(path, h)
	mux.HandleFunc("GET "+cpuPath, func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, int64(processCPU()))
	})
	url, stopListening, err := listen(mux)
	if err != nil {
		return err
	}
	defer stopListening()
	if _, err := fmt.Fprintln(out, servingPrefix+url+path); err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, stdin)
	return nil
}

// sideServer is one side of -compare served by a child process (this program
// with -serve).
type sideServer struct {
	side  string
	url   string
	cmd   *exec.Cmd
	stdin io.Closer
	// cpuURL answers with the child's CPU time so far.
	cpuURL string
}

// startServer starts a child serving side and waits for its URL.
func startServer(side string) (*sideServer, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe, "-serve", side)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the %s server: %w", side, err)
	}
	var url string
	lines := bufio.NewScanner(stdout)
	for lines.Scan() {
		if u, ok := strings.CutPrefix(lines.Text(), servingPrefix); ok {
			url = u
			break
		}
	}
	s := &sideServer{side: side, url: url, cpuURL: cpuURLOf(url), cmd: cmd, stdin: stdin}
	if url == "" {
		s.stop()
		return nil, fmt.Errorf("the %s server stopped before it served", side)
	}
	// The rest of the child's output is not read; keep its pipe drained
	// so a write to it cannot block the child.
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	return s, nil
}

// cpuURLOf is where the -serve process that announced serveURL answers
// with its CPU time.
func cpuURLOf(serveURL string) string {
	host, _, _ := strings.Cut(strings.TrimPrefix(serveURL, "http://"), "/")
	return "http://" + host + cpuPath
}

// cpu is the CPU time the server's process has used so far.
func (s *sideServer) cpu(ctx context.Context) (time.Duration, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.cpuURL, nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64))
	if err != nil {
		return 0, err
	}
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("%s: %s", s.cpuURL, resp.Status)
	}
	ns, err := strconv.ParseInt(string(body), 10, 64)
	return time.Duration(ns), err
}

// stop closes the child's stdin, which ends it, and waits for it; a child
// that does not end within ten seconds is killed.
func (s *sideServer) stop() {
	_ = s.stdin.Close()
	done := make(chan struct{})
	go func() { _ = s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = s.cmd.Process.Kill()
		<-done
	}
}

// bareEndpointPath is where bareHandler answers: mcp-go's default.
const bareEndpointPath = "/mcp"

// bareHandler registers the same arithmetic on mcp-go with no guards.
func bareHandler() http.Handler {
	s := server.NewMCPServer("bare", "1", server.WithToolCapabilities(false))
	s.AddTool(mcp.NewTool("calculate", mcp.WithString("expression", mcp.Required())),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			v, err := security.Evaluate(req.GetString("expression", ""), 200)
			if err != nil {
				return mcp.NewToolResultError(err.Error()), nil
			}
			text := security.FormatRat(v)
			f, _ := v.Float64()
			return &mcp.CallToolResult{
				Content:           []mcp.Content{mcp.NewTextContent(text)},
				StructuredContent: map[string]any{"result": f, "text": text},
			}, nil
		})
	return server.NewStreamableHTTPServer(s, server.WithStateLess(true))
}

func listen(h http.Handler) (string, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = hs.Serve(ln) }()
	return "http://" + ln.Addr().String(), func() { _ = hs.Close() }, nil
}

type report struct {
	calls, errors, limited int64
	elapsed                time.Duration
	// cpu is the CPU time (user and system) this process, the clients,
	// used meanwhile; serverCPU the server's process, when it is known.
	cpu, serverCPU time.Duration
	latencies      []time.Duration
}

func (r report) throughput() float64 { return float64(r.calls) / r.elapsed.Seconds() }

// perCPU is the calls per CPU second of the clients and the server.
func (r report) perCPU() float64 { return float64(r.calls) / (r.cpu + r.serverCPU).Seconds() }

func (r report) serverCPUPerCall() time.Duration {
	if r.calls == 0 {
		return 0
	}
	return r.serverCPU / time.Duration(r.calls)
}

// processCPU is the CPU time the process has used so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func (r report) pct(p float64) time.Duration {
	if len(r.latencies) == 0 {
		return 0
	}
	i := int(math.Ceil(p*float64(len(r.latencies)))) - 1
	return r.latencies[max(0, min(i, len(r.latencies)-1))]
}

func (r report) print(w io.Writer, label string) {
	fmt.Fprintf(w, "%-8s calls=%d throughput=%.0f/s p50=%s p95=%s p99=%s errors=%d rate_limited=%d",
		label, r.calls, r.throughput(), r.pct(0.50), r.pct(0.95), r.pct(0.99), r.errors, r.limited)
	if r.serverCPU > 0 {
		fmt.Fprintf(w, " server_cpu_per_call=%s", r.serverCPUPerCall().Round(100*time.Nanosecond))
	}
	fmt.Fprintln(w)
}

func merge(rs []report) report {
	var m report
	for _, r := range rs {
		m.calls += r.calls
		m.errors += r.errors
		m.limited += r.limited
		m.elapsed += r.elapsed
		m.cpu += r.cpu
		m.serverCPU += r.serverCPU
		m.latencies = append(m.latencies, r.latencies...)
	}
	slices.Sort(m.latencies)
	return m
}

// drive runs o.clients clients against url for o.duration. serverCPU,
// when not nil, tells the CPU time the server's process has used so far;
// the report then holds what it used while the clients ran.
func drive(ctx context.Context, url string, o options, serverCPU func(context.Context) (time.Duration, error)) (report, error) {
	clients := make([]*client.Client, o.clients)
	for i := range clients {
		c, err := connect(ctx, url, o)
		if err != nil {
			return report{}, err
		}
		defer c.Close()
		clients[i] = c
	}
	var serverStart time.Duration
	if serverCPU != nil {
		var err error
		if serverStart, err = serverCPU(ctx); err != nil {
			return report{}, err
		}
	}
	var calls, errs, limited atomic.Int64
	lat := make([][]time.Duration, o.clients)
	runCtx, cancel := context.WithTimeout(ctx, o.duration)
	defer cancel()
	start, cpu := time.Now(), processCPU()
	var wg sync.WaitGroup
	for i, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var req mcp.CallToolRequest
			req.Params.Name = o.tool
			req.Params.Arguments = map[string]any{"expression": o.expr}
			for runCtx.Err() == nil {
				t0 := time.Now()
				res, err := c.CallTool(runCtx, req)
				if runCtx.Err() != nil {
					return
				}
				lat[i] = append(lat[i], time.Since(t0))
				calls.Add(1)
				switch {
				case err != nil:
					errs.Add(1)
				case res.IsError && strings.Contains(fmt.Sprint(res.Meta), "rate_limited"):
					limited.Add(1)
				case res.IsError:
					errs.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	r := report{calls: calls.Load(), errors: errs.Load(), limited: limited.Load(), elapsed: time.Since(start), cpu: processCPU() - cpu}
	if serverCPU != nil {
		serverEnd, err := serverCPU(ctx)
		if err != nil {
			return report{}, err
		}
		r.serverCPU = serverEnd - serverStart
	}
	for _, l := range lat {
		r.latencies = append(r.latencies, l...)
	}
	slices.Sort(r.latencies)
	if r.calls == 0 {
		return r, errors.New("no call completed")
	}
	return r, nil
}

func connect(ctx context.Context, url string, o options) (*client.Client, error) {
	headers := map[string]string{}
	if o.token != "" {
		headers["Authorization"] = "Bearer " + o.token
	}
	tr, err := transport.NewStreamableHTTP(url, transport.WithHTTPHeaders(headers))
	if err != nil {
		return nil, err
	}
	var opts []client.ClientOption
	if o.legacy {
		opts = append(opts, client.WithProtocolVersion(mcp.LATEST_LEGACY_PROTOCOL_VERSION))
	}
	c := client.NewClient(tr, opts...)
	if err := c.Start(ctx); err != nil {
		return nil, err
	}
	var req mcp.InitializeRequest
	req.Params.ClientInfo = mcp.Implementation{Name: "arrowhead-loadtest", Version: "1"}
	if _, err := c.Initialize(ctx, req); err != nil {
		return nil, fmt.Errorf("initialize: %w", err)
	}
	return c, nil
}
