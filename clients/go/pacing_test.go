package robotsd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"reflect"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// arrivalJitter is how much closer together than their slots two fetches may reach the site.
// robotsd keeps the interval between the times the fetches may start; each worker starts when
// its wait (counted from the answer it received) ends, and the site sees the fetch when its
// handler runs: after the request is written, the connection accepted (a new one for one fetch,
// a pooled one for the next) and a goroutine scheduled. Those few milliseconds differ from one
// fetch to the next, so the site's gaps can come out a little shorter than the slots' (and the
// local clock's timer may fire a little late for one and on time for the next). 5 ms covers that
// on a loaded CI machine; any real pacing error is a whole interval.
const arrivalJitter = 5 * time.Millisecond

// paceGuard is robotsd's default --pace-guard: its slots are an interval and this apart.
const paceGuard = 50 * time.Millisecond

// timedSite is a loopback site that records when each page fetch started (robots.txt apart:
// robotsd fetches it once), with the robots.txt given and pages of its own.
type timedSite struct {
	*httptest.Server
	mu     sync.Mutex
	starts []fetchStart
}

type fetchStart struct {
	path string
	at   time.Time
}

func startTimedSite(t *testing.T, robots string, pages map[string]http.HandlerFunc) *timedSite {
	s := &timedSite{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		at := time.Now()
		if r.URL.Path == "/robots.txt" {
			fmt.Fprint(w, robots)
			return
		}
		s.mu.Lock()
		s.starts = append(s.starts, fetchStart{path: r.URL.Path, at: at})
		s.mu.Unlock()
		if page := pages[r.URL.Path]; page != nil {
			page(w, r)
			return
		}
		fmt.Fprintf(w, "page %s", r.URL.Path)
	}))
	t.Cleanup(s.Close)
	return s
}

// fetches is the page fetches so far, in the order they started.
func (s *timedSite) fetches() []fetchStart {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := append([]fetchStart(nil), s.starts...)
	sort.Slice(out, func(i, j int) bool { return out[i].at.Before(out[j].at) })
	return out
}

// closestGap is the shortest time between two consecutive fetch starts.
func closestGap(t *testing.T, fetches []fetchStart) time.Duration {
	if len(fetches) < 2 {
		t.Fatalf("%d fetches: no gap to measure", len(fetches))
	}
	closest := time.Duration(1<<63 - 1)
	for i := 1; i < len(fetches); i++ {
		if gap := fetches[i].at.Sub(fetches[i-1].at); gap < closest {
			closest = gap
		}
	}
	return closest
}

// fetchConcurrently fetches each pages from each of workers goroutines through client, and
// returns how long it took. Every fetch must succeed.
func fetchConcurrently(t *testing.T, client *http.Client, base string, workers, each int) time.Duration {
	start := time.Now()
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < each; i++ {
				resp, err := client.Get(fmt.Sprintf("%s/w%d/%d", base, w, i))
				if err != nil {
					t.Errorf("worker %d: %v", w, err)
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}(w)
	}
	wg.Wait()
	return time.Since(start)
}

// answers records what a Transport's OnAnswer sees.
type answers struct {
	mu  sync.Mutex
	all []*Answer
}

func (a *answers) record(_ *http.Request, answer *Answer) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.all = append(a.all, answer)
}

func (a *answers) list() []*Answer {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]*Answer(nil), a.all...)
}

func (a *answers) last() *Answer {
	all := a.list()
	if len(all) == 0 {
		return nil
	}
	return all[len(all)-1]
}

func TestPacedRequestsFromManyGoroutinesStartACrawlDelayApart(t *testing.T) {
	s := startTimedSite(t, "User-agent: *\nCrawl-delay: 0.2\n", nil)
	client := startRobotsd(t, "--default-crawl-delay", "50ms")
	var seen answers
	transport := &Transport{Client: client, UserAgent: "PaceBot", OnAnswer: seen.record}
	elapsed := fetchConcurrently(t, &http.Client{Transport: transport, Timeout: 10 * time.Second}, s.URL, 3, 3)

	fetches := s.fetches()
	if len(fetches) != 9 {
		t.Fatalf("%d fetches, want 9", len(fetches))
	}
	gap := closestGap(t, fetches)
	if gap < 200*time.Millisecond-arrivalJitter {
		t.Fatalf("two fetches started %v apart; the crawl-delay is 200ms", gap)
	}
	t.Logf("9 fetches in %v, closest %v apart", elapsed, gap)
	for _, a := range seen.list() {
		p := a.Pace
		if p == nil || !p.Reserved() || p.IntervalMS != 200 || p.IntervalSource != "crawl_delay" ||
			p.CrawlDelayLine == nil || *p.CrawlDelayLine != 2 || p.Scope != "local" || p.Slowdown != 1 {
			t.Fatalf("pace %+v", p)
		}
	}
	// One reservation a fetch, and one more for each slot a fetch woke up too late for (a busy
	// machine: more than 10 ms late, see slotLateness): a few at most.
	if n := len(seen.list()); n < 9 || n > 12 {
		t.Fatalf("%d answers for 9 fetches: one reservation a fetch, and one for each slot missed", n)
	}
	// Nine fetches 200 ms apart take 1.6 s; slots are not wasted.
	if elapsed > 2600*time.Millisecond {
		t.Fatalf("9 fetches took %v", elapsed)
	}
}

// failingFeedback is an http.RoundTripper to robotsd that loses every feedback post.
type failingFeedback struct{ base http.RoundTripper }

func (f failingFeedback) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Path == "/v1/feedback" {
		return nil, errors.New("feedback lost")
	}
	return f.base.RoundTrip(req)
}

func TestA429WithRetryAfterIsReportedAndHoldsTheNextFetchBack(t *testing.T) {
	for _, lost := range []bool{false, true} {
		name := map[bool]string{false: "reported", true: "report lost"}[lost]
		t.Run(name, func(t *testing.T) {
			s := startTimedSite(t, "User-agent: *\nDisallow: /private/\n", map[string]http.HandlerFunc{
				"/busy": func(w http.ResponseWriter, _ *http.Request) {
					w.Header().Set("Retry-After", "1")
					w.WriteHeader(http.StatusTooManyRequests)
				},
			})
			client := startRobotsd(t, "--default-crawl-delay", "50ms")
			asker := client
			if lost {
				copied := *client
				copied.HTTPClient = &http.Client{Transport: failingFeedback{client.HTTPClient.Transport}}
				asker = &copied
			}
			var seen answers
			crawler := &http.Client{Transport: &Transport{Client: asker, UserAgent: "PaceBot", OnAnswer: seen.record}}
			for _, path := range []string{"/busy", "/after"} {
				resp, err := crawler.Get(s.URL + path)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
			}
			fetches := s.fetches()
			if len(fetches) != 2 || fetches[0].path != "/busy" || fetches[1].path != "/after" {
				t.Fatalf("fetches %v", fetches)
			}
			gap := fetches[1].at.Sub(fetches[0].at)
			if gap < time.Second {
				t.Fatalf("the fetch after a 429 with Retry-After: 1 started %v after it", gap)
			}
			t.Logf("the fetch after the 429 started %v after it", gap)
			all := seen.list()
			if lost {
				// robotsd never heard of it: the Transport held its request back by itself.
				for _, answer := range all {
					if p := answer.Pace; p.Slowdown != 1 || p.RetryAfterUntil != nil {
						t.Fatalf("robotsd got a report: %+v", p)
					}
				}
				return
			}
			// The first answer for /after: held back by the Retry-After robotsd heard of. (The
			// Transport may ask again once the hold is over, when the Retry-After is past.)
			if len(all) < 2 {
				t.Fatalf("%d answers", len(all))
			}
			p := all[1].Pace
			if p.IntervalSource != "pushback" || p.RetryAfterUntil == nil || p.Slowdown < 1.9 || p.Slowdown > 2 {
				t.Fatalf("the answer after the 429: %+v", p)
			}
			// The success after it, reported while the origin is slowed down, eases the
			// slowdown (a tenth off); decay alone would leave it above 1.98 a second later.
			deadline := time.Now().Add(3 * time.Second)
			for {
				robots, err := client.Robots(context.Background(), s.URL+"/", false)
				if err != nil {
					t.Fatal(err)
				}
				if robots.Pace == nil {
					t.Fatal("robotsd keeps no pacing state for the site")
				}
				if robots.Pace.Slowdown < 1.95 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the success was not reported: %+v", robots.Pace)
				}
				time.Sleep(20 * time.Millisecond)
			}
		})
	}
}

func TestA5xxAndATimeoutAreReportedAndSlowTheOriginDown(t *testing.T) {
	s := startTimedSite(t, "User-agent: *\nDisallow: /private/\n", map[string]http.HandlerFunc{
		"/error": func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(http.StatusInternalServerError)
		},
		"/slow": func(w http.ResponseWriter, _ *http.Request) {
			time.Sleep(300 * time.Millisecond)
		},
		"/slower": func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-time.After(3 * time.Second):
			case <-r.Context().Done():
			}
		},
	})
	client := startRobotsd(t, "--default-crawl-delay", "50ms")
	var seen answers
	crawler := &http.Client{Transport: &Transport{
		Client:    client,
		UserAgent: "PaceBot",
		OnAnswer:  seen.record,
		Base:      &http.Transport{ResponseHeaderTimeout: 100 * time.Millisecond},
	}}
	get := func(path string) error {
		resp, err := crawler.Get(s.URL + path)
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	if err := get("/error"); err != nil {
		t.Fatal(err)
	}
	if err := get("/p/1"); err != nil {
		t.Fatal(err)
	}
	// A 500: twice the default interval.
	if p := seen.last().Pace; p.Slowdown < 1.9 || p.IntervalSource != "pushback" || p.IntervalMS < 95 || p.IntervalMS > 100 {
		t.Fatalf("the answer after a 500: %+v", p)
	}
	if err := get("/slow"); err == nil || failureOf(context.Background(), err, 0, 100*time.Millisecond) != failureTimeout {
		t.Fatalf("want a timeout, got %v", err)
	}
	if err := get("/p/2"); err != nil {
		t.Fatal(err)
	}
	// The success in between took a tenth off (×1.9); the timeout doubled it (×3.8).
	if p := seen.last().Pace; p.Slowdown < 3.5 || p.IntervalMS < 175 {
		t.Fatalf("the answer after a timeout: %+v", p)
	}
	// The crawler's own time limit (http.Client.Timeout), when the fetch had it (the wait for its
	// slot took at most a tenth: the slot is due by now), is a timeout too: ×3.5 after the
	// success of /p/2, doubled.
	time.Sleep(500 * time.Millisecond)
	limited := &http.Client{
		Timeout:   1500 * time.Millisecond,
		Transport: &Transport{Client: client, UserAgent: "PaceBot", OnAnswer: seen.record},
	}
	if _, err := limited.Get(s.URL + "/slower"); err == nil {
		t.Fatal("want a timeout")
	}
	resp, err := limited.Get(s.URL + "/p/3")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if p := seen.last().Pace; p.Slowdown < 6.5 {
		t.Fatalf("the answer after the crawler's time limit: %+v", p)
	}
}

func TestAnAnswerMuchSlowerThanUsualSlowsTheOriginDown(t *testing.T) {
	s := startTimedSite(t, "User-agent: *\n", map[string]http.HandlerFunc{
		"/lagging": func(w http.ResponseWriter, _ *http.Request) {
			time.Sleep(700 * time.Millisecond)
		},
	})
	client := startRobotsd(t, "--default-crawl-delay", "20ms")
	crawler := &http.Client{Transport: &Transport{Client: client, UserAgent: "PaceBot"}}
	get := func(path string) {
		resp, err := crawler.Get(s.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	slowdown := func() float64 {
		robots, err := client.Robots(context.Background(), s.URL+"/", false)
		if err != nil {
			t.Fatal(err)
		}
		if robots.Pace == nil {
			return 1
		}
		return robots.Pace.Slowdown
	}
	// Enough usual answers for robotsd to trust the site's baseline (five; a few more, as
	// reports arrive in batches), none of them slow.
	for i := 0; i < 8; i++ {
		get(fmt.Sprintf("/p/%d", i))
	}
	time.Sleep(300 * time.Millisecond)
	if got := slowdown(); got != 1 {
		t.Fatalf("slowed by usual answers: %v", got)
	}
	// One answer far slower than the baseline: its time, reported with it, slows the origin
	// down for the fleet (×1.5). No status says so: only the time does.
	get("/lagging")
	deadline := time.Now().Add(5 * time.Second)
	for slowdown() < 1.4 {
		if time.Now().After(deadline) {
			t.Fatalf("a slow answer did not slow the origin down: slowdown %v", slowdown())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestCancellingTheContextEndsTheWaitForASlotPromptly(t *testing.T) {
	s := startTimedSite(t, "User-agent: *\nCrawl-delay: 0.8\n", nil)
	client := startRobotsd(t, "--max-pace-wait", "1s")
	var seen answers
	transport := &Transport{Client: client, UserAgent: "PaceBot", OnAnswer: seen.record}
	crawler := &http.Client{Transport: transport}
	get := func(ctx context.Context, c *http.Client, path string) error {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+path, nil)
		resp, err := c.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	if err := get(context.Background(), crawler, "/first"); err != nil {
		t.Fatal(err)
	}
	// The next slot is 800 ms on: reserved, and waited for until the context is cancelled. The
	// one after is 1.6 s on, beyond --max-pace-wait: deferred, and waited for the same way.
	for _, want := range []string{PaceReserved, PaceDeferred} {
		ctx, cancel := context.WithCancel(context.Background())
		timer := time.AfterFunc(100*time.Millisecond, cancel)
		start := time.Now()
		err := get(ctx, crawler, "/"+want)
		elapsed := time.Since(start)
		timer.Stop()
		cancel()
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("%s: want context.Canceled, got %v", want, err)
		}
		if p := seen.last().Pace; p.Outcome != want || p.Wait() < 300*time.Millisecond {
			t.Fatalf("%s: the wait was %+v", want, p)
		}
		if elapsed > 250*time.Millisecond {
			t.Fatalf("%s: cancelled after 100ms, returned after %v", want, elapsed)
		}
	}
	// A slot deferred for longer than MaxPaceWait: a *DeferredError at once, nothing fetched.
	impatient := &http.Client{Transport: &Transport{Client: client, UserAgent: "PaceBot", MaxPaceWait: 100 * time.Millisecond}}
	start := time.Now()
	err := get(context.Background(), impatient, "/impatient")
	var deferred *DeferredError
	if !errors.As(err, &deferred) || deferred.Answer.Pace.Reserved() || time.Since(start) > 100*time.Millisecond {
		t.Fatalf("want a *DeferredError at once, got %v after %v", err, time.Since(start))
	}
	if fetches := s.fetches(); len(fetches) != 1 {
		t.Fatalf("fetches %v: only /first was to be fetched", fetches)
	}
}

func TestWithoutPacingTheTransportKeepsTheCrawlDelayItself(t *testing.T) {
	s := startTimedSite(t, "User-agent: *\nCrawl-delay: 0.2\n", nil)
	client := startRobotsd(t, "--default-crawl-delay", "50ms")
	var seen answers
	transport := &Transport{Client: client, UserAgent: "PaceBot", NoPacing: true, OnAnswer: seen.record}
	elapsed := fetchConcurrently(t, &http.Client{Transport: transport, Timeout: 10 * time.Second}, s.URL, 3, 3)

	fetches := s.fetches()
	if len(fetches) != 9 {
		t.Fatalf("%d fetches, want 9", len(fetches))
	}
	// The Transport keeps the crawl-delay and LocalPaceGuard between its starts, so the site
	// sees the crawl-delay unless the machine stalls one fetch more than the guard between its
	// start and the site; 100 ms of stall are allowed here (a busy two-core machine once stalled
	// a Scrapy fetch 79 ms). The failures this catches are far larger: no local pacing is no gap.
	gap := closestGap(t, fetches)
	if gap < 200*time.Millisecond+LocalPaceGuard-100*time.Millisecond {
		t.Fatalf("two fetches reached the site %v apart; the crawl-delay is 200ms", gap)
	}
	t.Logf("9 fetches in %v, closest %v apart", elapsed, gap)
	// Eight gaps of 250 ms at least; the bound is only there to catch a Transport that waits
	// far longer than it should (a busy machine adds far less than 8 s).
	if elapsed > 10*time.Second {
		t.Fatalf("9 fetches took %v", elapsed)
	}
	for _, a := range seen.list() {
		if a.Pace != nil || a.CrawlDelay == nil || *a.CrawlDelay != 0.2 {
			t.Fatalf("answer without pacing: pace %+v, crawl-delay %v", a.Pace, a.CrawlDelay)
		}
	}
	// Nothing was reserved: robotsd keeps no pacing state for the site.
	robots, err := client.Robots(context.Background(), s.URL+"/", false)
	if err != nil || robots.Pace != nil {
		t.Fatalf("%+v %v", robots, err)
	}
}

func TestDeferredSlotsAreAskedForAgainUntilEveryPageIsFetched(t *testing.T) {
	s := startTimedSite(t, "User-agent: *\nCrawl-delay: 0.25\n", nil)
	// Slots 300 ms apart (250 ms and the guard band), none reserved further than 100 ms ahead:
	// of requests sent together, all but the next are deferred, even on a busy machine.
	client := startRobotsd(t, "--max-pace-wait", "100ms")
	var deferred atomic.Int32
	transport := &Transport{Client: client, UserAgent: "PaceBot", OnAnswer: func(_ *http.Request, a *Answer) {
		if a.Pace != nil && !a.Pace.Reserved() {
			deferred.Add(1)
		}
	}}
	elapsed := fetchConcurrently(t, &http.Client{Transport: transport, Timeout: 10 * time.Second}, s.URL, 6, 1)

	fetches := s.fetches()
	if len(fetches) != 6 {
		t.Fatalf("%d fetches, want 6", len(fetches))
	}
	if deferred.Load() == 0 {
		t.Fatal("no slot was deferred: the test does not test deferral")
	}
	gap := closestGap(t, fetches)
	if gap < 250*time.Millisecond-arrivalJitter {
		t.Fatalf("two fetches started %v apart; the crawl-delay is 250ms", gap)
	}
	t.Logf("6 fetches in %v, closest %v apart, %d deferred answers", elapsed, gap, deferred.Load())
}

func TestTheClientReservesSlotsAndReportsFeedback(t *testing.T) {
	s := startTimedSite(t, "User-agent: *\nDisallow: /private/\nCrawl-delay: 0.2\n", nil)
	client := startRobotsd(t)
	ctx := context.Background()

	plain, err := client.Check(ctx, s.URL+"/a", "PaceBot")
	if err != nil || plain.Pace != nil {
		t.Fatalf("a check without pace: %+v %v", plain, err)
	}
	paced, err := client.CheckPaced(ctx, s.URL+"/a", "PaceBot")
	if err != nil || paced.Pace == nil || !paced.Pace.Reserved() || paced.Pace.IntervalMS != 200 {
		t.Fatalf("a paced check: %+v %v", paced, err)
	}
	refused, err := client.CheckPaced(ctx, s.URL+"/private/a", "PaceBot")
	if err != nil || refused.Allowed || refused.Pace != nil {
		t.Fatalf("a disallowed paced check reserves nothing: %+v %v", refused, err)
	}

	// A batch of one origin: staggered slots, one interval apart; a disallowed URL gets none.
	results, err := client.CheckManyPaced(ctx, []string{"PaceBot"},
		[]string{s.URL + "/b", s.URL + "/private/b", s.URL + "/c", s.URL + "/d"})
	if err != nil || len(results) != 4 {
		t.Fatalf("%+v %v", results, err)
	}
	var slots []time.Time
	for i, r := range results {
		if r.Problem != nil {
			t.Fatal(r.Problem)
		}
		if i == 1 {
			if r.Answer.Pace != nil {
				t.Fatalf("disallowed, yet %+v", r.Answer.Pace)
			}
			continue
		}
		at, err := time.Parse(time.RFC3339Nano, r.Answer.Pace.NotBefore)
		if err != nil || !r.Answer.Pace.Reserved() {
			t.Fatalf("%+v %v", r.Answer.Pace, err)
		}
		slots = append(slots, at)
	}
	for i := 1; i < len(slots); i++ {
		if gap := slots[i].Sub(slots[i-1]); gap != 200*time.Millisecond+paceGuard {
			t.Fatalf("slots %v apart", gap)
		}
	}

	feedback, err := client.Feedback(ctx, []Report{
		{URL: s.URL + "/b", Status: 429, RetryAfter: "2"},
		{URL: "ftp://example.com/", Status: 200},
		{URL: s.URL + "/c", Timeout: true},
	})
	if err != nil || len(feedback) != 3 {
		t.Fatalf("%+v %v", feedback, err)
	}
	if f := feedback[0]; f.Problem != nil || f.Origin != s.URL || f.Pace.Slowdown != 2 || f.Pace.RetryAfterUntil == nil {
		t.Fatalf("the 429: %+v %+v", f, f.Pace)
	}
	if f := feedback[1]; f.Problem == nil || f.Problem.Type != "urn:robotsd:problem:unsupported-scheme" || f.Pace != nil {
		t.Fatalf("the ftp report: %+v", f)
	}
	if f := feedback[2]; f.Problem != nil || f.Pace.Slowdown < 3.9 || f.Pace.LastSlot == nil {
		t.Fatalf("the timeout: %+v %+v", f, f.Pace)
	}
	state, err := client.Report(ctx, Report{URL: s.URL + "/d", Status: 200})
	if err != nil || state.Slowdown >= feedback[2].Pace.Slowdown || state.Slowdown < 3 {
		t.Fatalf("a success eases the slowdown: %+v %v", state, err)
	}
	if _, err := client.Report(ctx, Report{URL: s.URL + "/d"}); err == nil {
		t.Fatal("a report with neither a status nor a timeout was taken")
	} else if problem, ok := IsProblem(err); !ok || problem.Type != "urn:robotsd:problem:invalid-report" {
		t.Fatalf("%v", err)
	}

	robots, err := client.Robots(ctx, s.URL+"/page", true)
	if err != nil {
		t.Fatal(err)
	}
	if robots.Origin != s.URL || robots.State != "parsed" || robots.Pace == nil || robots.Pace.RetryAfterUntil == nil ||
		robots.RobotsTxt == nil || !strings.Contains(*robots.RobotsTxt, "Crawl-delay: 0.2") ||
		robots.Parsed == nil || len(robots.Parsed.Groups) != 1 || *robots.Parsed.Groups[0].CrawlDelay != 0.2 {
		t.Fatalf("robots %+v, pace %+v", robots, robots.Pace)
	}
}

// The caller's deadline is the site's timeout only when the wait for the slot took at most a
// tenth of it: it counts the wait. A cancellation never is; a refused or reset connection is
// reported as such.
func TestWhichFailuresAreTheSitesTimeouts(t *testing.T) {
	expired, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	headers := &url.Error{Op: "Get", URL: "http://site/", Err: timeoutError{}}
	refused := &url.Error{Op: "Get", URL: "http://site/", Err: &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}}
	reset := &url.Error{Op: "Get", URL: "http://site/", Err: &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}}
	closed := &url.Error{Op: "Get", URL: "http://site/", Err: io.EOF}
	for _, c := range []struct {
		ctx         context.Context
		err         error
		waited, ran time.Duration
		want        failure
	}{
		{context.Background(), headers, 2 * time.Second, 100 * time.Millisecond, failureTimeout},
		{context.Background(), errors.New("no such host"), 0, time.Second, failureNone},
		{context.Background(), refused, 0, time.Millisecond, failureRefused},
		{context.Background(), reset, 0, time.Millisecond, failureReset},
		{context.Background(), closed, 0, time.Millisecond, failureReset},
		{expired, context.DeadlineExceeded, 10 * time.Millisecond, 2 * time.Second, failureTimeout},
		{expired, errors.New("net/http: request canceled"), 0, 2 * time.Second, failureTimeout},
		{expired, context.DeadlineExceeded, 1500 * time.Millisecond, 2500 * time.Millisecond, failureNone},
		{expired, context.DeadlineExceeded, 980 * time.Millisecond, 20 * time.Millisecond, failureNone},
		{cancelled, context.Canceled, 0, 2 * time.Second, failureNone},
	} {
		if got := failureOf(c.ctx, c.err, c.waited, c.ran); got != c.want {
			t.Errorf("%v after waiting %v and running %v: %v, want %v", c.err, c.waited, c.ran, got, c.want)
		}
	}
}

// A fetch whose slot took much of the crawler's time limit (http.Client.Timeout) to come, and
// that the limit then ended, is not the site's timeout: the site would have answered within the
// limit, had the fetch had it. Crawl-delay 1.5 s, a 4 s limit, a page that takes 3 s.
func TestTheWaitForASlotIsNotCountedAsTheSitesTimeout(t *testing.T) {
	s := startTimedSite(t, "User-agent: *\nCrawl-delay: 1.5\n", map[string]http.HandlerFunc{
		"/slow": func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-time.After(3 * time.Second):
			case <-r.Context().Done():
			}
		},
	})
	client := startRobotsd(t)
	var seen answers
	crawler := &http.Client{
		Timeout:   4 * time.Second,
		Transport: &Transport{Client: client, UserAgent: "PaceBot", OnAnswer: seen.record},
	}
	resp, err := crawler.Get(s.URL + "/p/1")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	// Its slot 1.55 s ahead: the limit ends the fetch after some 2.45 s of it.
	if _, err := crawler.Get(s.URL + "/slow"); err == nil {
		t.Fatal("want the crawler's time limit to end the fetch")
	}
	// Nothing reported: the next slot is at the crawl-delay, not slowed down.
	resp, err = crawler.Get(s.URL + "/p/2")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if p := seen.last().Pace; p.Slowdown != 1 || p.IntervalSource != "crawl_delay" {
		t.Fatalf("the answer after the fetch the wait cut short: %+v", p)
	}
}

// A connection refused, and one reset before any answer, are reported as such (robotsd slows
// the origin down), not as timeouts; each failed fetch once.
func TestRefusedAndResetConnectionsAreReportedAsSuch(t *testing.T) {
	var reports []Report
	var mu sync.Mutex
	client := startRobotsd(t, "--default-crawl-delay", "50ms")
	base := client.HTTPClient.Transport
	client.HTTPClient.Transport = roundTripFunc(func(req *http.Request) (*http.Response, error) {
		if req.URL.Path == "/v1/feedback" {
			body, _ := io.ReadAll(req.Body)
			var sent FeedbackRequest
			if err := json.Unmarshal(body, &sent); err != nil {
				t.Error(err)
			}
			mu.Lock()
			reports = append(reports, sent.Reports...)
			mu.Unlock()
			req.Body = io.NopCloser(bytes.NewReader(body))
		}
		return base.RoundTrip(req)
	})
	resetting := startTimedSite(t, "User-agent: *\n", map[string]http.HandlerFunc{
		"/reset": func(w http.ResponseWriter, _ *http.Request) {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err != nil {
				t.Error(err)
				return
			}
			conn.(*net.TCPConn).SetLinger(0)
			conn.Close()
		},
	})
	refusing := startTimedSite(t, "User-agent: *\n", nil)
	var seen answers
	crawler := &http.Client{
		Timeout:   10 * time.Second,
		Transport: &Transport{Client: client, UserAgent: "PaceBot", OnAnswer: seen.record},
	}
	if _, err := crawler.Get(resetting.URL + "/reset"); err == nil {
		t.Fatal("want the reset")
	}
	// robotsd holds the refusing site's robots.txt; then nothing listens there any more.
	if _, err := client.Check(context.Background(), refusing.URL+"/p/1", "PaceBot"); err != nil {
		t.Fatal(err)
	}
	refusing.Close()
	if _, err := crawler.Get(refusing.URL + "/p/1"); err == nil {
		t.Fatal("want the refusal")
	}
	// The next reservations wait for the reports: robotsd has them, and slowed both down.
	for _, site := range []string{resetting.URL, refusing.URL} {
		answer, err := client.CheckPaced(context.Background(), site+"/p/2", "PaceBot")
		if err != nil {
			t.Fatal(err)
		}
		_ = answer
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		n := len(reports)
		mu.Unlock()
		if n >= 2 || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	want := []Report{
		{URL: resetting.URL + "/reset", Connection: ConnectionReset},
		{URL: refusing.URL + "/p/1", Connection: ConnectionRefused},
	}
	if !reflect.DeepEqual(reports, want) {
		t.Fatalf("reports %+v, want %+v", reports, want)
	}
	for _, site := range []string{resetting.URL, refusing.URL} {
		robots, err := client.Robots(context.Background(), site+"/", false)
		if err != nil {
			t.Fatal(err)
		}
		if robots.Pace == nil || robots.Pace.Slowdown < 1.9 {
			t.Fatalf("%s not slowed down: %+v", site, robots.Pace)
		}
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// A deferred slot is asked for again after its wait and a jitter of up to a tenth of it, at
// most a second: spread, so that the workers told the same not_before do not all ask at once.
func TestTheAskAgainDelayHasABoundedJitter(t *testing.T) {
	for _, c := range []struct {
		wait   time.Duration
		random float64
		want   time.Duration
	}{
		{400 * time.Millisecond, 0, 400 * time.Millisecond},
		{400 * time.Millisecond, 0.5, 420 * time.Millisecond},
		{30 * time.Second, 0.5, 30*time.Second + 500*time.Millisecond},
		{60 * time.Second, 0.5, 60*time.Second + 500*time.Millisecond},
		{0, 0.5, 0},
	} {
		if got := askAgainDelay(c.wait, func() float64 { return c.random }); got != c.want {
			t.Errorf("askAgainDelay(%v, %v) = %v, want %v", c.wait, c.random, got, c.want)
		}
	}
	buckets := map[time.Duration]bool{}
	for i := 0; i < 100; i++ {
		d := askAgainDelay(5*time.Second, rand.Float64)
		if d < 5*time.Second || d >= 5500*time.Millisecond {
			t.Fatalf("askAgainDelay(5s) = %v, outside [5s, 5.5s)", d)
		}
		buckets[d/(50*time.Millisecond)] = true
	}
	if len(buckets) < 5 {
		t.Fatalf("100 delays in %d buckets of 50 ms: not spread", len(buckets))
	}
}

type timeoutError struct{}

func (timeoutError) Error() string   { return "timeout awaiting response headers" }
func (timeoutError) Timeout() bool   { return true }
func (timeoutError) Temporary() bool { return true }
