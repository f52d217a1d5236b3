package robotsd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// When robotsd cannot answer (README, "When robotsd cannot answer"): down, its own 503s (retried
// within one budget per call) and a proxy's (never retried), its other problems, and a site
// without robots.txt, which is not robotsd failing at all. robotsd is never overloaded in a
// test: its 503s come from a loopback stand-in that counts the requests it gets.

// canned is an answer a stand-in gives: a status, its headers and body.
type canned struct {
	status  int
	headers map[string]string
	body    string
}

// overloaded is robotsd's own 503, as it answers over its concurrency limit.
var overloaded = canned{503, map[string]string{"Content-Type": "application/problem+json", "Retry-After": "0"},
	`{"type":"urn:robotsd:problem:overloaded","title":"Overloaded","status":503,"detail":"too many requests in flight"}`}

// cacheFull1s is robotsd's own 503 with a Retry-After of a second.
var cacheFull1s = canned{503, map[string]string{"Content-Type": "application/problem+json; charset=utf-8", "Retry-After": "1"},
	`{"type":"urn:robotsd:problem:cache-full","title":"Cache full","status":503,"detail":"evicted for memory"}`}

// cacheFull30s is robotsd's own 503 asking for 30 s: a wait no call limit here leaves room for,
// so that giving up at once is told from waiting by a wide margin.
var cacheFull30s = canned{503, map[string]string{"Content-Type": "application/problem+json; charset=utf-8", "Retry-After": "30"},
	cacheFull1s.body}

// proxy503 is a proxy's 503 in front of robotsd: an HTML page.
var proxy503 = canned{503, map[string]string{"Content-Type": "text/html", "Retry-After": "0"},
	`<html><body><h1>503 Service Temporarily Unavailable</h1></body></html>`}

// otherProblem503 is a 503 in problem+json that is not robotsd's (a gateway speaking RFC 9457).
var otherProblem503 = canned{503, map[string]string{"Content-Type": "application/problem+json", "Retry-After": "0"},
	`{"type":"about:blank","title":"Service Unavailable","status":503,"detail":"upstream down"}`}

// standIn answers every request with its answers in turn, the last one again once they run
// out, and records the path and arrival of each request.
type standIn struct {
	*httptest.Server
	mu       sync.Mutex
	answers  []canned
	arrivals []time.Time
	paths    []string
}

func startStandIn(t *testing.T, answers ...canned) *standIn {
	s := &standIn{answers: answers}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		s.mu.Lock()
		s.arrivals = append(s.arrivals, time.Now())
		s.paths = append(s.paths, r.URL.Path)
		answer := s.answers[0]
		if len(s.answers) > 1 {
			s.answers = s.answers[1:]
		}
		s.mu.Unlock()
		for name, value := range answer.headers {
			w.Header().Set(name, value)
		}
		w.WriteHeader(answer.status)
		fmt.Fprint(w, answer.body)
	}))
	t.Cleanup(s.Close)
	return s
}

// count is the number of requests for paths starting with prefix.
func (s *standIn) count(prefix string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, p := range s.paths {
		if strings.HasPrefix(p, prefix) {
			n++
		}
	}
	return n
}

func TestRobotsdOwn503IsSentAgainTwiceThenReturned(t *testing.T) {
	s := startStandIn(t, overloaded)
	_, err := New(s.URL).Check(context.Background(), "http://site.test/", "ExampleBot")
	problem, ok := IsProblem(err)
	if !ok || problem.Status != 503 || problem.Type != "urn:robotsd:problem:overloaded" {
		t.Fatalf("want robotsd's 503, got %v", err)
	}
	// One call, one budget: the first request and DefaultMaxRetries more.
	if DefaultMaxRetries != 2 || s.count("/") != 3 {
		t.Fatalf("%d requests, want 3", s.count("/"))
	}
}

func TestA503ThatIsNotRobotsdOwnIsNotRetried(t *testing.T) {
	for name, answer := range map[string]canned{"html": proxy503, "other problem": otherProblem503} {
		s := startStandIn(t, answer)
		_, err := New(s.URL).Check(context.Background(), "http://site.test/", "ExampleBot")
		problem, ok := IsProblem(err)
		if !ok || problem.Status != 503 || s.count("/") != 1 {
			t.Fatalf("%s: %v after %d requests, want its 503 after 1", name, err, s.count("/"))
		}
		if name == "html" && (problem.Type != "" || !strings.Contains(problem.Detail, "503 Service Temporarily Unavailable")) {
			t.Fatalf("a proxy's page: %+v", problem)
		}
	}
}

func TestOtherProblemsAreNotRetried(t *testing.T) {
	s := startStandIn(t, canned{400, map[string]string{"Content-Type": "application/problem+json"},
		`{"type":"urn:robotsd:problem:invalid-url","title":"Invalid URL","status":400,"detail":"x"}`})
	_, err := New(s.URL).Check(context.Background(), "http://site.test/", "ExampleBot")
	if problem, ok := IsProblem(err); !ok || problem.Status != 400 || s.count("/") != 1 {
		t.Fatalf("%v after %d requests", err, s.count("/"))
	}
}

func TestARetryWaitsRobotsdRetryAfterAndCanSucceed(t *testing.T) {
	real := startRobotsd(t)
	site := startSite(t)
	// The answer robotsd gives, served by the stand-in after a cache-full of a second.
	resp, err := real.HTTPClient.Get(real.BaseURL + "/v1/check?ua=ExampleBot&url=" + site.URL + "/p/1")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	s := startStandIn(t, cacheFull1s, canned{200, map[string]string{"Content-Type": "application/json"}, string(body)})
	answer, err := New(s.URL).Check(context.Background(), site.URL+"/p/1", "ExampleBot")
	if err != nil || !answer.Allowed {
		t.Fatalf("%+v %v", answer, err)
	}
	if len(s.arrivals) != 2 {
		t.Fatalf("%d requests, want 2", len(s.arrivals))
	}
	// Retry-After: 1 (the jitter's bound is held exactly by askAgainDelay's test); a busy machine
	// may add to it.
	if gap := s.arrivals[1].Sub(s.arrivals[0]); gap < time.Second || gap >= 3*time.Second {
		t.Fatalf("the retry came %v after the 503", gap)
	}
}

func TestARetryAfterPastTheCallTimeLimitGivesUpAtOnce(t *testing.T) {
	// A wait of 30 s past a limit of 5: given up at once, where waiting would take 30 s.
	s := startStandIn(t, cacheFull30s)
	short := New(s.URL)
	short.HTTPClient.Timeout = 5 * time.Second
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for name, call := range map[string]func() error{
		"HTTPClient.Timeout": func() error {
			_, err := short.Check(context.Background(), "http://site.test/", "ExampleBot")
			return err
		},
		"the context": func() error { _, err := New(s.URL).Check(ctx, "http://site.test/", "ExampleBot"); return err },
	} {
		before, start := s.count("/"), time.Now()
		err := call()
		if problem, ok := IsProblem(err); !ok || problem.Type != "urn:robotsd:problem:cache-full" {
			t.Fatalf("%s: %v", name, err)
		}
		if s.count("/")-before != 1 || time.Since(start) >= 4*time.Second {
			t.Fatalf("%s: %d requests in %v, want 1 at once", name, s.count("/")-before, time.Since(start))
		}
	}
}

func TestMaxRetriesNegativeNeverRetries(t *testing.T) {
	s := startStandIn(t, overloaded)
	client := New(s.URL)
	client.MaxRetries = -1
	if _, err := client.Check(context.Background(), "http://site.test/", "ExampleBot"); err == nil || s.count("/") != 1 {
		t.Fatalf("%v after %d requests", err, s.count("/"))
	}
	client.MaxRetries = 1
	if _, err := client.Check(context.Background(), "http://site.test/", "ExampleBot"); err == nil || s.count("/") != 3 {
		t.Fatalf("%v after %d requests", err, s.count("/"))
	}
}

func TestEveryCallHasItsOwnBudget(t *testing.T) {
	// A batch, a report and a page are retried as a check is; each call once, however many
	// calls came before it.
	s := startStandIn(t, overloaded)
	client, ctx := New(s.URL), context.Background()
	for i := 0; i < 2; i++ {
		if _, err := client.CheckMany(ctx, []string{"ExampleBot"}, []string{"http://site.test/a", "http://site.test/b"}); err == nil {
			t.Fatal("no error")
		}
	}
	if _, err := client.Report(ctx, Report{URL: "http://site.test/a", Status: 429}); err == nil {
		t.Fatal("no error")
	}
	if _, err := client.PostPage(ctx, PageRequest{URL: "http://site.test/a", UA: []string{"ExampleBot"}}); err == nil {
		t.Fatal("no error")
	}
	if s.count("/v1/check") != 6 || s.count("/v1/feedback") != 3 || s.count("/v1/page") != 3 {
		t.Fatalf("%d, %d, %d requests", s.count("/v1/check"), s.count("/v1/feedback"), s.count("/v1/page"))
	}
}

func TestTheTransportAsksAnOverloadedRobotsdOnceABudget(t *testing.T) {
	// The Transport retries nothing itself: a request's check is one call, sent three times to
	// robotsd's own 503 and once to a proxy's; then the request fails (closed), or goes (open).
	site := startSite(t)
	for name, c := range map[string]struct {
		answer   canned
		requests int
	}{"robotsd": {overloaded, 3}, "proxy": {proxy503, 1}} {
		for _, noPacing := range []bool{false, true} {
			s := startStandIn(t, c.answer)
			closed := &http.Client{Transport: &Transport{Client: New(s.URL), NoPacing: noPacing}}
			_, err := closed.Get(site.URL + "/p/1")
			var unavailable *UnavailableError
			problem, ok := IsProblem(err)
			if !errors.As(err, &unavailable) || !ok || problem.Status != 503 || s.count("/") != c.requests {
				t.Fatalf("%s, no pacing %v: %v after %d requests", name, noPacing, err, s.count("/"))
			}
			open := &http.Client{Transport: &Transport{Client: New(s.URL), NoPacing: noPacing, FailOpen: true}}
			resp, err := open.Get(site.URL + "/p/1")
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if s.count("/") != 2*c.requests {
				t.Fatalf("%s, no pacing %v, FailOpen: %d requests", name, noPacing, s.count("/"))
			}
		}
	}
	if site.hits("/p/1") != 4 {
		t.Fatalf("FailOpen fetched /p/1 %d times, want 4", site.hits("/p/1"))
	}
}

func TestRetryAfterIsReadAsRobotsdWritesItAndBounded(t *testing.T) {
	now := time.Unix(4, 0)
	for value, want := range map[string]time.Duration{
		"3":                             3 * time.Second,
		"":                              time.Second,
		"soon":                          time.Second,
		"-1":                            time.Second,
		"86400":                         MaxRetryWait,
		"Thu, 01 Jan 1970 00:00:10 GMT": 6 * time.Second,
		"Thu, 01 Jan 1970 00:00:01 GMT": 0,
	} {
		if got := retryAfter(value, now); got != want {
			t.Errorf("Retry-After %q: %v, want %v", value, got, want)
		}
	}
}

func TestRobotsdDownFailsAtOnceWithoutRetrying(t *testing.T) {
	down := New(fmt.Sprintf("http://127.0.0.1:%d", freePort(t)))
	start := time.Now()
	_, err := down.Check(context.Background(), "http://site.test/", "ExampleBot")
	if !errors.Is(err, syscall.ECONNREFUSED) || time.Since(start) > time.Second {
		t.Fatalf("%v after %v", err, time.Since(start))
	}
	if _, ok := IsProblem(err); ok {
		t.Fatal("a connection refused is not a problem")
	}
}

func TestASiteWithoutRobotsTxtIsAllowedEverything(t *testing.T) {
	// Not robotsd failing: a 404 for robots.txt allows everything (RFC 9309 §2.3.1.3), with no
	// crawl-delay (nil); a paced check keeps robotsd's default interval, and the Transport
	// fetches.
	var robotsHits, pageHits int
	var mu sync.Mutex
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if r.URL.Path == "/robots.txt" {
			robotsHits++
			http.NotFound(w, r)
			return
		}
		pageHits++
		fmt.Fprint(w, "page")
	}))
	t.Cleanup(site.Close)
	client := startRobotsd(t, "--default-crawl-delay", "50ms")
	ctx := context.Background()
	answer, err := client.Check(ctx, site.URL+"/private/1", "ExampleBot")
	if err != nil || !answer.Allowed || answer.Reason != "no_robots_txt" || answer.Rule != nil || answer.CrawlDelay != nil {
		t.Fatalf("%+v %v", answer, err)
	}
	if answer.Robots == nil || answer.Robots.Status == nil || *answer.Robots.Status != 404 {
		t.Fatalf("%+v", answer.Robots)
	}
	paced, err := client.CheckPaced(ctx, site.URL+"/p/1", "ExampleBot")
	if err != nil || paced.Pace == nil || paced.Pace.IntervalSource != "default" {
		t.Fatalf("%+v %v", paced, err)
	}
	for _, noPacing := range []bool{false, true} {
		resp, err := (&http.Client{Transport: &Transport{Client: client, NoPacing: noPacing}}).Get(site.URL + "/p/2")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	mu.Lock()
	defer mu.Unlock()
	if robotsHits != 1 || pageHits != 2 {
		t.Fatalf("robots.txt fetched %d times, pages %d", robotsHits, pageHits)
	}
}
