package redis

// The copy's bookkeeping without a server: ordering, gaps, the wait for
// announcements a check needs, and the guard against installing a caller's
// set that misses announcements. The copy against a real redis-server, and
// the race of a write on one replica with a check on another, are in
// test/integration/flows_test.go.

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

var idA, idB = strings.Repeat("a", 64), strings.Repeat("b", 64)

// announcement builds what rememberScript publishes.
func announcement(version uint64, expiry int64, id string, marks ...uint64) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d %d %s\n", version, expiry, id)
	for _, m := range marks {
		b.WriteString(member(m))
	}
	return b.String()
}

func liveCopy(t *testing.T, version uint64) *flowSync {
	t.Helper()
	f := &flowSync{}
	f.init()
	f.reset(version, monoNow())
	return f
}

func far() int64 { return time.Now().Add(time.Hour).UnixMilli() }

func TestFlowCopyAppliesInOrderAndStopsOnAGap(t *testing.T) {
	f := liveCopy(t, 10)
	f.install(idA, 10, time.Now().UnixMilli(), time.Now().UnixMilli(), map[uint64]int64{1: far()})
	if !f.apply(announcement(11, far(), idA, 2, 3)) || !f.apply(announcement(12, far(), idB, 4)) {
		t.Fatal("in-order announcements refused")
	}
	if n, ans := f.lookup(context.Background(), 12, idA, []uint64{1, 2, 3, 4}); ans != copyAnswered || n != 3 {
		t.Fatalf("lookup = %d, %v; want 3 answered (idB's mark is not idA's)", n, ans)
	}
	// idB was never read: the copy says so rather than answering 0.
	if _, ans := f.lookup(context.Background(), 12, idB, []uint64{4}); ans != copyMissing {
		t.Fatalf("an uncopied caller answered %v", ans)
	}
	// A replayed announcement changes nothing; a skipped one is a gap.
	if !f.apply(announcement(11, far(), idA, 2)) {
		t.Fatal("a replayed announcement was taken for a gap")
	}
	if f.apply(announcement(14, far(), idA, 9)) {
		t.Fatal("a gap in the versions was not noticed")
	}
	for _, bad := range []string{"", "12 1 " + idA, "x 1 " + idA + "\n", "13 1 short\n", "13 1 " + idA + "\nabc"} {
		if f.apply(bad) {
			t.Errorf("malformed announcement %q applied", bad)
		}
	}
	f.stop()
	if _, ans := f.lookup(context.Background(), 0, idA, []uint64{1}); ans != copyUnusable {
		t.Fatalf("a stopped copy answered %v", ans)
	}
}

func TestFlowCopyForgetsExpiredMarks(t *testing.T) {
	f := liveCopy(t, 0)
	now := time.Now().UnixMilli()
	// The server's clock runs an hour ahead of this replica's: expiries
	// are the server's, so a mark due in 30 min of server time is live.
	offset := int64(time.Hour / time.Millisecond)
	f.install(idA, 0, now+offset, now, map[uint64]int64{1: now + offset - 1000, 2: now + offset + 30*60*1000})
	if n, ans := f.lookup(context.Background(), 0, idA, []uint64{1, 2}); ans != copyAnswered || n != 1 {
		t.Fatalf("lookup = %d, %v; want only the live mark", n, ans)
	}
}

// TestFlowCopyWaitsForTheVersionItNeeds: a check whose proof names a
// version the copy has not applied waits for the announcement, and gives up
// (ask Redis) when it does not come.
func TestFlowCopyWaitsForTheVersionItNeeds(t *testing.T) {
	f := liveCopy(t, 5)
	f.install(idA, 5, time.Now().UnixMilli(), time.Now().UnixMilli(), map[uint64]int64{})
	go func() {
		time.Sleep(10 * time.Millisecond)
		f.apply(announcement(6, far(), idA, 42))
	}()
	if n, ans := f.lookup(context.Background(), 6, idA, []uint64{42}); ans != copyAnswered || n != 1 {
		t.Fatalf("lookup = %d, %v; want the mark announced while it waited", n, ans)
	}
	start := time.Now()
	if _, ans := f.lookup(context.Background(), 7, idA, []uint64{42}); ans != copyUnusable {
		t.Fatalf("a version that never came answered %v", ans)
	}
	if waited := time.Since(start); waited < flowSyncWait {
		t.Fatalf("gave up after %v, before flowSyncWait", waited)
	}
}

// TestFlowCopyInstallsOnlyCompleteSets: a caller's set read at version v is
// not installed when an announcement for that caller after v was applied
// before the set arrived (the set may lack it), nor when the ring no
// longer covers the versions in between.
func TestFlowCopyInstallsOnlyCompleteSets(t *testing.T) {
	now := time.Now().UnixMilli()
	f := liveCopy(t, 0)
	f.apply(announcement(1, far(), idB, 1))
	f.apply(announcement(2, far(), idA, 2))
	f.install(idA, 1, now, now, map[uint64]int64{})
	if _, ans := f.lookup(context.Background(), 2, idA, []uint64{2}); ans != copyMissing {
		t.Fatalf("a set missing announcement 2 was installed (%v)", ans)
	}
	f.install(idA, 2, now, now, map[uint64]int64{2: far()})
	f.install(idB, 1, now, now, map[uint64]int64{1: far()}) // version 2 was idA's: complete
	for id, m := range map[string]uint64{idA: 2, idB: 1} {
		if n, ans := f.lookup(context.Background(), 2, id, []uint64{m}); ans != copyAnswered || n != 1 {
			t.Fatalf("%s: lookup = %d, %v; want installed", id[:1], n, ans)
		}
	}
	g := liveCopy(t, 100)
	g.install(idA, 50, now, now, map[uint64]int64{}) // read before the reset: versions 51..100 unknown
	if _, ans := g.lookup(context.Background(), 100, idA, nil); ans != copyMissing {
		t.Fatalf("a set older than the copy's start was installed (%v)", ans)
	}
}

func TestFlowCopyStaysBounded(t *testing.T) {
	f := liveCopy(t, 0)
	now := time.Now().UnixMilli()
	f.install(idA, 0, now, now, map[uint64]int64{})
	marks := make([]uint64, MaxFlowMarksPerCaller+1)
	for i := range marks {
		marks[i] = uint64(i)
	}
	f.apply(announcement(1, far(), idA, marks...))
	if _, ans := f.lookup(context.Background(), 1, idA, marks[:1]); ans != copyMissing || f.marks != 0 {
		t.Fatalf("a caller over its limit stayed copied (%v, %d marks)", ans, f.marks)
	}
	for i := range maxCopiedFlowCallers + 10 {
		f.install(fmt.Sprintf("%064x", i), 1, now, now, map[uint64]int64{1: far()})
	}
	if len(f.callers) > maxCopiedFlowCallers || f.marks != len(f.callers) {
		t.Fatalf("%d callers and %d marks copied", len(f.callers), f.marks)
	}
}

func TestObserveKeepsTheNewest(t *testing.T) {
	f := &flowSync{}
	f.init()
	f.observe(7, 100)
	f.observe(5, 50)
	if f.obsVersion.Load() != 7 || f.obsSent.Load() != 100 {
		t.Fatalf("observation went back: %d at %d", f.obsVersion.Load(), f.obsSent.Load())
	}
	// A counter that restarted (Redis came back empty) is believed.
	f.reset(2, 200)
	if f.obsVersion.Load() != 2 || f.obsSent.Load() != 200 {
		t.Fatalf("after a reset at 2: %d at %d", f.obsVersion.Load(), f.obsSent.Load())
	}
}

// TestFlowCopySkipsOnlyItsOwnWrites: a check need not wait for the
// announcement of a write this replica made (its marks are in the
// fallback), but still waits for any other replica's before it.
func TestFlowCopySkipsOnlyItsOwnWrites(t *testing.T) {
	f := liveCopy(t, 5)
	f.install(idA, 5, time.Now().UnixMilli(), time.Now().UnixMilli(), map[uint64]int64{1: far()})
	f.own(6)
	f.own(3) // already applied: nothing to skip
	start := time.Now()
	if n, ans := f.lookup(context.Background(), 6, idA, []uint64{1}); ans != copyAnswered || n != 1 {
		t.Fatalf("lookup = %d, %v; want answered", n, ans)
	}
	if waited := time.Since(start); waited >= flowSyncWait {
		t.Fatalf("waited %v for this replica's own write", waited)
	}
	f.own(8) // 7 is another replica's, not yet announced
	if _, ans := f.lookup(context.Background(), 8, idA, []uint64{1}); ans != copyUnusable {
		t.Fatalf("answered (%v) without another replica's write 7", ans)
	}
	if !f.apply(announcement(6, far(), idA, 2)) || !f.apply(announcement(7, far(), idB, 3)) {
		t.Fatal("announcements refused")
	}
	if n, ans := f.lookup(context.Background(), 8, idA, []uint64{1, 2}); ans != copyAnswered || n != 2 {
		t.Fatalf("lookup = %d, %v; want both marks once 7 came", n, ans)
	}
	if _, ok := f.pending[6]; ok || len(f.pending) != 1 {
		t.Fatalf("pending own writes %v; want only 8", f.pending)
	}
}
