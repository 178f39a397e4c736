package postgres

// One sql_query is one exchange with PostgreSQL (a failing one, two: the
// second ends its failed transaction). A TCP proxy between pgx
// and the server reads the frontend protocol and counts the client's
// turns: a turn is what the client sends before the server next answers.
// The statement log (log_statement=all) would show the same but needs a
// cluster configured for it and a superuser to read it; the proxy works
// against whatever server the test environment provides, CI's included,
// and sees the wire itself rather than the server's account of it.

import (
	"encoding/binary"
	"io"
	"net"
	"net/url"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/arrowhead-go/arrowhead/ports"
)

// wireProxy forwards one or more connections to upstream and records, per
// client turn, the types of the frontend messages sent in it.
type wireProxy struct {
	ln       net.Listener
	upstream string

	mu       sync.Mutex
	turns    [][]byte // message types per turn, all connections
	answered bool     // the server sent something since the client's last turn
}

func startWireProxy(t testing.TB, upstream string) *wireProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &wireProxy{ln: ln, upstream: upstream, answered: true}
	t.Cleanup(func() { _ = ln.Close() })
	go p.serve()
	return p
}

func (p *wireProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", p.upstream)
		if err != nil {
			_ = c.Close()
			continue
		}
		go func() {
			p.fromServer(s, c)
			_ = c.Close()
		}()
		go func() {
			p.fromClient(c, s)
			_ = s.Close()
		}()
	}
}

// fromServer forwards the server's bytes, marking that it answered before
// they reach the client, so a client message sent in reply always counts
// as a new turn. It holds each answer back for answerHold first: bytes the
// client wrote without waiting (a pipeline may take two writes, and the
// server answers the first Sync at once) are read as part of the turn
// they belong to, while a client that waits for the answer still cannot
// send before it is forwarded.
func (p *wireProxy) fromServer(s, c net.Conn) {
	const answerHold = 20 * time.Millisecond
	buf := make([]byte, 64<<10)
	for {
		n, err := s.Read(buf)
		if n > 0 {
			time.Sleep(answerHold)
			p.mu.Lock()
			p.answered = true
			p.mu.Unlock()
			if _, werr := c.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// fromClient forwards the client's bytes message by message. The first
// message of a connection (and any SSL or GSS request) has no type byte.
func (p *wireProxy) fromClient(c, s net.Conn) {
	untyped := true
	var hdr [5]byte
	for {
		var typ byte
		var body int
		if untyped {
			if _, err := io.ReadFull(c, hdr[:4]); err != nil {
				return
			}
			n := int(binary.BigEndian.Uint32(hdr[:4]))
			var code [4]byte
			if _, err := io.ReadFull(c, code[:]); err != nil {
				return
			}
			if _, err := s.Write(append(hdr[:4:4], code[:]...)); err != nil {
				return
			}
			// 80877103 and 80877104 are the SSL and GSS encryption
			// requests; a startup message follows them.
			if v := binary.BigEndian.Uint32(code[:]); v != 80877103 && v != 80877104 {
				untyped = false
			}
			typ, body = 0, n-8
		} else {
			if _, err := io.ReadFull(c, hdr[:]); err != nil {
				return
			}
			typ, body = hdr[0], int(binary.BigEndian.Uint32(hdr[1:]))-4
			if _, err := s.Write(hdr[:]); err != nil {
				return
			}
		}
		if typ != 0 {
			p.mu.Lock()
			if p.answered || len(p.turns) == 0 {
				p.turns = append(p.turns, nil)
				p.answered = false
			}
			p.turns[len(p.turns)-1] = append(p.turns[len(p.turns)-1], typ)
			p.mu.Unlock()
		}
		if _, err := io.CopyN(s, c, int64(body)); err != nil {
			return
		}
	}
}

// since returns the turns recorded after mark. Without all, it skips
// the turns that are a lone simple Query: the pool's liveness ping (the
// runner itself never uses the simple protocol).
func (p *wireProxy) since(mark int, all bool) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for _, turn := range p.turns[mark:] {
		if s := string(turn); all || s != "Q" {
			out = append(out, s)
		}
	}
	return out
}

// mark returns the number of turns so far. Taken between two calls, it
// splits them: the next call's first message follows the previous call's
// answer, so it starts a new turn.
func (p *wireProxy) mark() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.turns)
}

// proxied starts a proxy in front of dsn's server and returns it with a
// DSN that goes through it.
func proxied(t testing.TB, dsn string) (*wireProxy, string) {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal("unparsable test DSN")
	}
	p := startWireProxy(t, u.Host)
	u.Host = p.ln.Addr().String()
	return p, u.String()
}

// The frontend traffic of one Query, all in one turn: BEGIN READ ONLY,
// the settings, the statement, ROLLBACK and one Sync. All four are the
// connection's prepared statements: the first call with a statement sends
// its Parse and a Describe ahead of its Bind/Describe/Execute, later ones
// only its Bind/Execute (BEGIN and ROLLBACK, which have no columns, a
// Describe too). BEGIN, ROLLBACK and the settings were prepared by the
// connection's first call (connectExchange). A call that fails has the
// server skip the ROLLBACK, and sends it once more, alone and unnamed, in
// a second turn.
const (
	connectExchange  = "PD" + "PD" + "BDE" + "PD" + "BDE" + "PD" + "BDE" + "BDE" + "S"
	firstExchange    = "BDE" + "BE" + "PD" + "BDE" + "BDE" + "S"
	repeatExchange   = "BDE" + "BE" + "BE" + "BDE" + "S"
	rollbackExchange = "PBDES"
)

func TestIntegrationQueryIsOneExchange(t *testing.T) {
	db := requireDB(t)
	for name, tc := range map[string]struct {
		sql  string
		args []any
		kind ports.SQLErrorKind
		rows int
		// again is the second call's traffic: a statement the server
		// could not parse was never prepared, so it is parsed again.
		again string
	}{
		"rows":      {sql: "select id, name from fixture.items where id >= $1 order by id", args: []any{1}, rows: 3, again: repeatExchange},
		"truncated": {sql: "select g from generate_series(1, 1000) g", rows: 2, again: repeatExchange},
		"refused":   {sql: "select * from pg_authid", kind: ports.SQLRejected, again: repeatExchange},
		"invalid":   {sql: "select no_such_column from fixture.items", kind: ports.SQLInvalid, again: firstExchange},
	} {
		t.Run(name, func(t *testing.T) {
			lim := defaultLimits
			if name == "truncated" {
				lim.MaxRows = 2
			}
			p, dsn := proxied(t, db.roDSN)
			r := runner(t, dsn, WithMaxConns(1))
			m := p.mark()
			mustQuery(t, r, "select 1", defaultLimits) // connect outside the count
			// After the authentication ("p" turns), one exchange.
			turns := p.since(m, false)
			for len(turns) > 1 && turns[0] == "p" {
				turns = turns[1:]
			}
			if !slices.Equal(turns, []string{connectExchange}) {
				t.Errorf("first call: client turns = %q, want authentication then %q", p.since(m, false), connectExchange)
			}
			for i, want := range []string{firstExchange, tc.again} {
				m := p.mark()
				res, err := query(r, tc.sql, lim, tc.args...)
				if tc.kind != "" {
					wantSQLError(t, err, tc.kind)
				} else if err != nil || len(res.Rows) != tc.rows {
					t.Fatalf("query %d: %d rows, %v", i, len(res.Rows), err)
				}
				wantTurns := []string{want}
				if tc.kind != "" {
					wantTurns = append(wantTurns, rollbackExchange)
				}
				if turns := p.since(m, false); !slices.Equal(turns, wantTurns) {
					t.Errorf("call %d: client turns = %q, want %q", i, turns, wantTurns)
				}
			}
			// The connection came back idle and serves the next call: the
			// same connection, whose settings are still prepared.
			m = p.mark()
			mustQuery(t, r, "select 2", defaultLimits)
			if turns := p.since(m, false); !slices.Equal(turns, []string{firstExchange}) {
				t.Errorf("next call: client turns = %q, want %q on the same connection", turns, firstExchange)
			}
		})
	}
}

// TestIntegrationWireProxyCountsTurns checks the proxy on a client known
// to take several turns: a transaction with pgx's own BEGIN, a SET, a
// query with a parameter (prepared, then executed) and a ROLLBACK.
func TestIntegrationWireProxyCountsTurns(t *testing.T) {
	db := requireDB(t)
	p, dsn := proxied(t, db.roDSN)
	pool, err := NewPool(t.Context(), dsn, WithMaxConns(1))
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	m := p.mark()
	err = pool.inTx(t.Context(), pgx.ReadOnly, false, func(tx pgx.Tx) error {
		if _, err := tx.Exec(t.Context(), "SET LOCAL statement_timeout = 1000"); err != nil {
			return err
		}
		rows, err := tx.Query(t.Context(), "select id from fixture.items where id > $1", 0)
		if err != nil {
			return err
		}
		rows.Close()
		return rows.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := p.since(m, true); len(got) < 4 {
		t.Errorf("client turns = %q, want at least four", got)
	}
}
