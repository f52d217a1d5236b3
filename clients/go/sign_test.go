package robotsd

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

// The signing tests run robotsd with a committed test key (RFC 9421's B.1.4, never a key to
// deploy) and send the signed requests to a loopback site that verifies every signature it
// receives as a site would, with a verifier that shares no code with robotsd
// (tests/wba/verifying_site.py: PyPI's http-message-signatures), run by the Python that
// ROBOTSD_WBA_PYTHON names (.ci/client-checks.sh exports it).

// wbaDirectory is the fleet's key directory as the signatures name it; the site fetches it
// from robotsd under this host.
const wbaDirectory = "https://bot.example/.well-known/http-message-signatures-directory"

// startSigningRobotsd runs robotsd with the test key, and args.
func startSigningRobotsd(t *testing.T, args ...string) *Client {
	keys := filepath.Join("..", "..", "tests", "wba", "test-keys.json")
	return startRobotsd(t, append([]string{"--wba-keys", keys, "--wba-agent", wbaDirectory}, args...)...)
}

// siteRequest is a request the verifying site received, as it logs it.
type siteRequest struct {
	Method   string `json:"method"`
	Path     string `json:"path"`
	Verified bool   `json:"verified"`
	Reason   string `json:"reason"`
}

// verifyingSite is tests/wba/verifying_site.py running on a loopback port: /robots.txt for
// anyone; for a verified request, the page of pages (HTML, or {"redirect": "/path"}: a 301),
// else 404; 401 for any request not verified.
type verifyingSite struct {
	URL   string
	mu    sync.Mutex
	seen  []siteRequest
	syncs int
}

// startVerifyingSite runs the site, which fetches the key directory from keys (a robotsd with
// keys). A missing ROBOTSD_WBA_PYTHON fails the test: it is never skipped.
func startVerifyingSite(t *testing.T, keys *Client, robots string, pages map[string]any) *verifyingSite {
	python := os.Getenv("ROBOTSD_WBA_PYTHON")
	if python == "" {
		t.Fatal("ROBOTSD_WBA_PYTHON must name a Python with .ci/wba-requirements.txt installed (.ci/client-checks.sh exports it)")
	}
	dir := t.TempDir()
	robotsFile := filepath.Join(dir, "robots.txt")
	pagesFile := filepath.Join(dir, "pages.json")
	encoded, err := json.Marshal(pages)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(robotsFile, []byte(robots), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pagesFile, encoded, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(python, filepath.Join("..", "..", "tests", "wba", "verifying_site.py"),
		"--directory-url", wbaDirectory,
		"--fetch-from", keys.BaseURL+"/.well-known/http-message-signatures-directory",
		"--robots", robotsFile, "--pages", pagesFile)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &verifyingSite{}
	listening := make(chan string, 1)
	read := make(chan struct{})
	go func() {
		defer close(read)
		lines := bufio.NewScanner(stdout)
		if !lines.Scan() {
			close(listening)
			return
		}
		listening <- lines.Text()
		for lines.Scan() {
			var request siteRequest
			// Other lines (a failed refresh of the directory) name no method.
			if json.Unmarshal(lines.Bytes(), &request) == nil && request.Method != "" {
				s.mu.Lock()
				s.seen = append(s.seen, request)
				s.mu.Unlock()
			}
		}
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-read
		_ = cmd.Wait()
	})
	select {
	case line := <-listening:
		var port int
		if _, err := fmt.Sscanf(line, "listening %d", &port); err != nil {
			t.Fatalf("the verifying site said %q", line)
		}
		s.URL = fmt.Sprintf("http://127.0.0.1:%d", port)
	case <-time.After(30 * time.Second):
		t.Fatal("the verifying site did not start")
	}
	return s
}

// requests is what the site received since the mark'th request (see mark), its own robots.txt
// fetches and sync's left out; all requests made before are in it (see sync).
func (s *verifyingSite) requests(t *testing.T, mark int) []siteRequest {
	s.sync(t)
	s.mu.Lock()
	defer s.mu.Unlock()
	var requests []siteRequest
	for _, request := range s.seen[mark:] {
		if !strings.HasPrefix(request.Path, "/robots.txt") {
			requests = append(requests, request)
		}
	}
	return requests
}

// mark is how many requests the site has logged.
func (s *verifyingSite) mark(t *testing.T) int {
	s.sync(t)
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.seen)
}

// sync waits until the site's log is read up to now: it asks for /robots.txt with a query of
// its own (answered to anyone) and waits for that line. The site logs each request before it
// answers, so every request answered before is logged before it.
func (s *verifyingSite) sync(t *testing.T) {
	s.mu.Lock()
	s.syncs++
	path := fmt.Sprintf("/robots.txt?sync=%d", s.syncs)
	s.mu.Unlock()
	resp, err := http.Get(s.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	drain(resp)
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		s.mu.Lock()
		for _, request := range s.seen {
			if request.Path == path {
				s.mu.Unlock()
				return
			}
		}
		s.mu.Unlock()
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("the verifying site did not log %s", path)
}

// drain reads a response to its end before closing it: a connection closed with the answer
// unread is reset, and the site then logs the reset as an error.
func drain(resp *http.Response) {
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
}

const signingRobots = "User-agent: *\nDisallow: /private\nCrawl-delay: 0.01\n"

var signingPages = map[string]any{
	"/":                            `<a href="/a">a</a>`,
	"/a":                           `page a`,
	"/search?q=signed%20query&n=1": `results`,
	"/old":                         map[string]string{"redirect": "/new"},
	"/new":                         `page new`,
	"/moved":                       map[string]string{"redirect": "/private/moved"},
	"/private/report":              `not to be fetched`,
	"/private/moved":               `not to be fetched`,
}

// A crawler with Sign set: every request it sends verifies at the site (with pacing and
// without), a redirect's second hop too; a disallowed page, or a redirect to one, is never
// requested, and a POST is refused before anything is sent.
func TestSignedRequestsVerifyAtTheSite(t *testing.T) {
	client := startSigningRobotsd(t)
	s := startVerifyingSite(t, client, signingRobots, signingPages)
	for _, noPacing := range []bool{false, true} {
		t.Run(fmt.Sprintf("NoPacing=%v", noPacing), func(t *testing.T) {
			var signed, unsigned int
			crawler := &http.Client{Timeout: 30 * time.Second, Transport: &Transport{
				Client: client, UserAgent: "ExampleBot", Sign: true, NoPacing: noPacing,
				OnAnswer: func(_ *http.Request, answer *Answer) {
					if answer.Sign != nil {
						signed++
					} else {
						unsigned++
					}
				},
			}}
			mark := s.mark(t)
			send := func(method, path string) (*http.Response, error) {
				req, err := http.NewRequest(method, s.URL+path, nil)
				if err != nil {
					t.Fatal(err)
				}
				resp, err := crawler.Do(req)
				if err == nil {
					drain(resp)
				}
				return resp, err
			}
			for _, fetch := range []struct{ method, path, landed string }{
				{http.MethodGet, "/", "/"},
				{http.MethodGet, "/a", "/a"},
				{http.MethodGet, "/search?q=signed%20query&n=1", "/search"},
				// robotsd signs the URL as it parses it (the dot segments resolved): the
				// request goes there.
				{http.MethodGet, "/x/../a", "/a"},
				// http.Client follows the redirect through the Transport: the hop is signed.
				{http.MethodGet, "/old", "/new"},
				{http.MethodHead, "/a", "/a"},
			} {
				resp, err := send(fetch.method, fetch.path)
				if err != nil {
					t.Fatalf("%s %s: %v", fetch.method, fetch.path, err)
				}
				if resp.StatusCode != http.StatusOK || resp.Request.URL.Path != fetch.landed {
					t.Fatalf("%s %s: %d from %s", fetch.method, fetch.path, resp.StatusCode, resp.Request.URL)
				}
			}
			// The redirect from /moved is followed to a disallowed page: that hop is refused.
			for path, refused := range map[string]string{"/private/report": "/private/report", "/moved": "/private/moved"} {
				_, err := send(http.MethodGet, path)
				var disallowed *DisallowedError
				if !errors.As(err, &disallowed) || disallowed.URL != s.URL+refused {
					t.Fatalf("GET %s: want a *DisallowedError for %s, got %v", path, refused, err)
				}
			}
			_, err := send(http.MethodPost, "/a")
			var refused *UnsignedError
			if !errors.As(err, &refused) || refused.Method != http.MethodPost || refused.Answer != nil {
				t.Fatalf("POST: want an *UnsignedError, got %v", err)
			}

			// Every request the site got is verified, and it got no other: not the disallowed
			// pages, nor the POST.
			var got []string
			for _, request := range s.requests(t, mark) {
				got = append(got, request.Method+" "+request.Path)
				if !request.Verified {
					t.Errorf("%s %s was not verified: %s", request.Method, request.Path, request.Reason)
				}
			}
			want := []string{"GET /", "GET /a", "GET /search?q=signed%20query&n=1", "GET /a",
				"GET /old", "GET /new", "HEAD /a", "GET /moved"}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("the site got %q\nwant %q", got, want)
			}
			// A signed answer for each request sent (more if a slot was woken up for late and
			// asked for again); the two disallowed answers have none.
			if signed < len(want) || unsigned != 2 {
				t.Fatalf("%d signed answers, %d unsigned", signed, unsigned)
			}
		})
	}
}

// The plain client asks for a signature with CheckSigned and CheckPacedSigned; it is good for
// its one request.
func TestTheClientAsksForASignatureOfOneRequest(t *testing.T) {
	client := startSigningRobotsd(t)
	s := startVerifyingSite(t, client, signingRobots, signingPages)
	ctx := context.Background()
	mark := s.mark(t)
	sendSigned := func(signed *Signed, rawURL string) int {
		req, err := http.NewRequest(signed.Method, rawURL, nil)
		if err != nil {
			t.Fatal(err)
		}
		for name, value := range signed.Headers {
			req.Header.Set(name, value)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		drain(resp)
		return resp.StatusCode
	}

	head, err := client.CheckSigned(ctx, http.MethodHead, s.URL+"/a", "ExampleBot")
	if err != nil || !head.Allowed || head.Sign == nil || head.Pace != nil {
		t.Fatalf("%+v %v", head, err)
	}
	if head.Sign.Method != http.MethodHead || head.Sign.URL != s.URL+"/a" || len(head.Sign.Headers) != 3 || head.Sign.KeyID == "" {
		t.Fatalf("%+v", head.Sign)
	}
	if status := sendSigned(head.Sign, head.Sign.URL); status != http.StatusOK {
		t.Fatalf("HEAD as signed: %d", status)
	}
	paced, err := client.CheckPacedSigned(ctx, http.MethodGet, s.URL+"/a", "ExampleBot")
	if err != nil || paced.Sign == nil || paced.Pace == nil || !paced.Pace.Reserved() {
		t.Fatalf("%+v %v", paced, err)
	}
	time.Sleep(paced.Pace.Wait())
	if status := sendSigned(paced.Sign, paced.Sign.URL); status != http.StatusOK {
		t.Fatalf("GET as signed: %d", status)
	}
	// Another path, another method: the site refuses them.
	if status := sendSigned(paced.Sign, s.URL+"/new"); status != http.StatusUnauthorized {
		t.Fatalf("the signature of /a sent for /new: %d", status)
	}
	other := *head.Sign
	other.Method = http.MethodGet
	if status := sendSigned(&other, head.Sign.URL); status != http.StatusUnauthorized {
		t.Fatalf("the signature of a HEAD sent with a GET: %d", status)
	}
	disallowed, err := client.CheckSigned(ctx, http.MethodGet, s.URL+"/private/report", "ExampleBot")
	if err != nil || disallowed.Allowed || disallowed.Sign != nil {
		t.Fatalf("a disallowed URL: %+v %v", disallowed, err)
	}
	plain, err := client.Check(ctx, s.URL+"/a", "ExampleBot")
	if err != nil || plain.Sign != nil {
		t.Fatalf("a signature nobody asked for: %+v %v", plain.Sign, err)
	}

	var got []string
	for _, request := range s.requests(t, mark) {
		got = append(got, fmt.Sprintf("%s %s %v", request.Method, request.Path, request.Verified))
	}
	want := []string{"HEAD /a true", "GET /a true", "GET /new false", "GET /a false"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("the site got %q, want %q", got, want)
	}
}

// robotsd's problems with signing (no keys; an agent its --wba-product-token does not name) fail
// the request with the *Problem, FailOpen or not: it would go out unsigned. FailOpen still lets a
// request through, unsigned, when robotsd cannot answer at all.
func TestSigningProblemsFailTheRequestEvenWithFailOpen(t *testing.T) {
	keyed := startSigningRobotsd(t, "--wba-product-token", "ExampleBot")
	s := startVerifyingSite(t, keyed, signingRobots, signingPages)
	unkeyed := startRobotsd(t)
	mark := s.mark(t)
	for _, failOpen := range []bool{false, true} {
		for _, noPacing := range []bool{false, true} {
			for _, c := range []struct {
				client  *Client
				ua      string
				problem string
			}{
				{unkeyed, "ExampleBot", "urn:robotsd:problem:signing-off"},
				{keyed, "OtherBot", "urn:robotsd:problem:sign-other-agent"},
			} {
				crawler := &http.Client{Transport: &Transport{
					Client: c.client, UserAgent: c.ua, Sign: true, FailOpen: failOpen, NoPacing: noPacing,
				}}
				_, err := crawler.Get(s.URL + "/a")
				problem, ok := IsProblem(err)
				var unavailable *UnavailableError
				if !ok || problem.Type != c.problem || problem.Status != http.StatusBadRequest || !errors.As(err, &unavailable) {
					t.Fatalf("FailOpen %v, NoPacing %v, %s: want %s, got %v", failOpen, noPacing, c.ua, c.problem, err)
				}
			}
		}
	}
	// The plain client's check answers the problem too.
	_, err := unkeyed.CheckSigned(context.Background(), http.MethodGet, s.URL+"/a", "ExampleBot")
	if problem, ok := IsProblem(err); !ok || problem.Type != "urn:robotsd:problem:signing-off" {
		t.Fatalf("want signing-off, got %v", err)
	}
	if got := s.requests(t, mark); len(got) != 0 {
		t.Fatalf("the site got %+v", got)
	}

	// robotsd unreachable: FailOpen sends the request as it would without Sign, unsigned.
	down := New(fmt.Sprintf("http://127.0.0.1:%d", freePort(t)))
	open := &http.Client{Transport: &Transport{Client: down, Sign: true, FailOpen: true}}
	resp, err := open.Get(s.URL + "/a")
	if err != nil {
		t.Fatal(err)
	}
	drain(resp)
	got := s.requests(t, mark)
	if resp.StatusCode != http.StatusUnauthorized || len(got) != 1 || got[0].Verified || got[0].Reason != "unsigned" {
		t.Fatalf("%d, the site got %+v", resp.StatusCode, got)
	}
}

// Without pacing, a Transport's requests to one origin wait a crawl-delay apart after their
// check: a wait that outlasts the signature (2 s here, the crawl-delay 2.5 s) has the request
// signed again, and it verifies.
func TestASignatureTheCrawlDelayOutlastsIsAskedForAgain(t *testing.T) {
	client := startSigningRobotsd(t, "--wba-ttl", "2s")
	s := startVerifyingSite(t, client, "User-agent: *\nCrawl-delay: 2.5\n", signingPages)
	var answers int
	var last *Signed
	crawler := &http.Client{Timeout: 30 * time.Second, Transport: &Transport{
		Client: client, UserAgent: "ExampleBot", Sign: true, NoPacing: true,
		OnAnswer: func(_ *http.Request, answer *Answer) {
			answers++
			last = answer.Sign
		},
	}}
	mark := s.mark(t)
	for _, path := range []string{"/a", "/new"} {
		resp, err := crawler.Get(s.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		drain(resp)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d", path, resp.StatusCode)
		}
	}
	got := s.requests(t, mark)
	if len(got) != 2 || !got[0].Verified || !got[1].Verified {
		t.Fatalf("the site got %+v", got)
	}
	// /a at once; /new checked, kept waiting 2.5 s, checked again. The site's verifier allows
	// for 5 s of clock skew, so it would have taken the first signature too: the one sent had
	// not expired (robotsd's clock is this machine's).
	if answers != 3 {
		t.Fatalf("%d answers for two requests", answers)
	}
	if expires, err := time.Parse(time.RFC3339, last.Expires); err != nil || !expires.After(time.Now()) {
		t.Fatalf("/new was sent with a signature that expired at %s (%v)", last.Expires, err)
	}
}

func TestASignatureRunsOutWithAQuarterOfItsLifeOrFiveSecondsLeft(t *testing.T) {
	minute := &Signed{Created: "2026-01-01T00:00:00Z", Expires: "2026-01-01T00:01:00Z"}
	short := &Signed{Created: "2026-01-01T00:00:00Z", Expires: "2026-01-01T00:00:04Z"}
	for _, c := range []struct {
		signed  *Signed
		elapsed time.Duration
		out     bool
	}{
		{minute, 0, false},
		{minute, 54 * time.Second, false},
		{minute, 56 * time.Second, true},
		{short, 2900 * time.Millisecond, false},
		{short, 3100 * time.Millisecond, true},
		{&Signed{Created: "?", Expires: "?"}, time.Hour, false},
	} {
		if out := signatureRunsOut(c.signed, c.elapsed); out != c.out {
			t.Errorf("%+v after %s: %v", c.signed, c.elapsed, out)
		}
	}
}

func TestTheRequestTargetIsTheURLAsWritten(t *testing.T) {
	for raw, want := range map[string]string{
		"http://h:8080/a/b?q=1%202": "/a/b?q=1%202",
		"https://h/":                "/",
		"http://h":                  "/",
		"http://h?q":                "/?q",
		"http://u:p@h/a|b":          "/a|b",
	} {
		if got := requestTarget(raw); got != want {
			t.Errorf("%s: %q, want %q", raw, got, want)
		}
	}
}
