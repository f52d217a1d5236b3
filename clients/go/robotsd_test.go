package robotsd

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// The robots.txt of the test site: allow, disallow, a wildcard, an anchor and a crawl-delay.
const siteRobots = `User-agent: *
Disallow: /private/
Allow: /private/public
Disallow: /*.pdf$
Crawl-delay: 0.01

User-agent: OtherBot
Disallow: /
`

// site is a loopback site of 51 pages: an index linking to 50 others, some of which robots.txt
// disallows. It records every path fetched.
type site struct {
	*httptest.Server
	mu      sync.Mutex
	fetched map[string]int
}

func sitePaths() []string {
	paths := []string{"/"}
	for i := 0; i < 30; i++ {
		paths = append(paths, fmt.Sprintf("/p/%d", i))
	}
	for i := 0; i < 10; i++ {
		paths = append(paths, fmt.Sprintf("/private/%d", i))
	}
	for i := 0; i < 5; i++ {
		paths = append(paths, fmt.Sprintf("/private/public/%d", i), fmt.Sprintf("/docs/%d.pdf", i))
	}
	return paths
}

func startSite(t *testing.T) *site {
	s := &site{fetched: map[string]int{}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.fetched[r.URL.Path]++
		s.mu.Unlock()
		if r.URL.Path == "/robots.txt" {
			fmt.Fprint(w, siteRobots)
			return
		}
		if r.URL.Path == "/" {
			for _, p := range sitePaths()[1:] {
				fmt.Fprintf(w, "<a href=\"%s\">%s</a>\n", p, p)
			}
			return
		}
		fmt.Fprintf(w, "page %s", r.URL.Path)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *site) hits(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fetched[path]
}

func (s *site) pages() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var pages []string
	for p := range s.fetched {
		if p != "/robots.txt" {
			pages = append(pages, p)
		}
	}
	sort.Strings(pages)
	return pages
}

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startRobotsd runs the robotsd binary named by ROBOTSD_BIN (the release build, in CI) on a
// free loopback port. A missing binary fails the test: it is never skipped.
func startRobotsd(t *testing.T, args ...string) *Client {
	bin := os.Getenv("ROBOTSD_BIN")
	if bin == "" {
		t.Fatal("ROBOTSD_BIN must name a robotsd binary (cargo build --release; .ci/client-checks.sh sets it)")
	}
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	cmd := exec.Command(bin, append([]string{"--allow-private-networks", "--listen", addr}, args...)...)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	client := New("http://" + addr)
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := client.HTTPClient.Get(client.BaseURL + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return client
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("robotsd did not become ready on %s: %v", addr, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

var link = regexp.MustCompile(`href="([^"]+)"`)

// crawl is a small crawler as any Go crawler is: breadth first from start, following links,
// through client. Disallowed pages are skipped; any other error fails the test.
func crawl(t *testing.T, client *http.Client, start string) (skipped []string) {
	seen := map[string]bool{start: true}
	queue := []string{start}
	for len(queue) > 0 {
		page := queue[0]
		queue = queue[1:]
		req, _ := http.NewRequest(http.MethodGet, page, nil)
		req.Header.Set("User-Agent", "Mozilla/5.0 (compatible; ExampleBot/1.0; +https://crawler.example/bot)")
		resp, err := client.Do(req)
		var disallowed *DisallowedError
		if errors.As(err, &disallowed) {
			skipped = append(skipped, page)
			continue
		}
		if err != nil {
			t.Fatalf("GET %s: %v", page, err)
		}
		body := make([]byte, 64<<10)
		n, _ := resp.Body.Read(body)
		resp.Body.Close()
		for _, m := range link.FindAllStringSubmatch(string(body[:n]), -1) {
			next := strings.TrimSuffix(start, "/") + m[1]
			if !seen[next] {
				seen[next] = true
				queue = append(queue, next)
			}
		}
	}
	return skipped
}

func TestACrawlThroughTheTransportFetchesExactlyWhatRobotsdAllows(t *testing.T) {
	s := startSite(t)
	client := startRobotsd(t)
	var delays []float64
	transport := &Transport{
		Client: client,
		OnAnswer: func(_ *http.Request, a *Answer) {
			if a.CrawlDelay != nil {
				delays = append(delays, *a.CrawlDelay)
			}
		},
	}
	skipped := crawl(t, &http.Client{Transport: transport, Timeout: 10 * time.Second}, s.URL+"/")

	// What robotsd allows, asked in one batch.
	var urls []string
	for _, p := range sitePaths() {
		urls = append(urls, s.URL+p)
	}
	results, err := client.CheckMany(context.Background(), []string{"ExampleBot"}, urls)
	if err != nil {
		t.Fatal(err)
	}
	var allowed []string
	for i, r := range results {
		if r.Problem != nil {
			t.Fatalf("%s: %v", urls[i], r.Problem)
		}
		if r.Answer.Allowed {
			allowed = append(allowed, sitePaths()[i])
		}
	}
	sort.Strings(allowed)
	if got := s.pages(); !reflect.DeepEqual(got, allowed) {
		t.Fatalf("fetched %v\nallowed %v", got, allowed)
	}
	// 1 index + 30 pages + 5 under /private/public; 10 private and 5 PDFs skipped.
	if len(allowed) != 36 || len(skipped) != 15 {
		t.Fatalf("%d allowed, %d skipped", len(allowed), len(skipped))
	}
	if hits := s.hits("/robots.txt"); hits != 1 {
		t.Fatalf("robots.txt fetched %d times: once is robotsd's, the crawler never does", hits)
	}
	if len(delays) == 0 || delays[0] != 0.01 {
		t.Fatalf("crawl-delay not seen: %v", delays)
	}
}

func TestADisallowedRequestCarriesTheReasonAndTheLine(t *testing.T) {
	s := startSite(t)
	client := startRobotsd(t)
	crawler := &http.Client{Transport: &Transport{Client: client, UserAgent: "ExampleBot"}}
	_, err := crawler.Get(s.URL + "/private/report")
	var disallowed *DisallowedError
	if !errors.As(err, &disallowed) {
		t.Fatalf("want a *DisallowedError, got %v", err)
	}
	a := disallowed.Answer
	if a.Reason != "matched_rule" || a.Rule == nil || a.Rule.Line != 2 || a.Rule.Pattern != "/private/" {
		t.Fatalf("answer %+v rule %+v", a, a.Rule)
	}
	if !strings.Contains(err.Error(), "robots.txt line 2 (disallow: /private/)") {
		t.Fatal(err)
	}
	if s.hits("/private/report") != 0 {
		t.Fatal("the disallowed page was fetched")
	}
	// Another agent, another group.
	answer, err := client.Check(context.Background(), s.URL+"/p/1", "OtherBot")
	if err != nil || answer.Allowed || answer.Group == nil || answer.Group.Global {
		t.Fatalf("%+v %v", answer, err)
	}
}

func TestACheckRecordedCarriesWhatRobotsTxtSaidOfTheURL(t *testing.T) {
	s := startSite(t)
	client := startRobotsd(t)
	plain, err := client.Check(context.Background(), s.URL+"/private/report", "ExampleBot")
	if err != nil || plain.Record != nil {
		t.Fatalf("a record nobody asked for: %s %v", plain.Record, err)
	}
	answer, err := client.CheckRecorded(context.Background(), s.URL+"/private/report", "ExampleBot")
	if err != nil {
		t.Fatal(err)
	}
	var record struct {
		Format    string `json:"format"`
		URL       string `json:"url"`
		RobotsTxt struct {
			Allowed bool   `json:"allowed"`
			SHA256  string `json:"sha256"`
			Rule    *Rule  `json:"rule"`
		} `json:"robots_txt"`
		Robots json.RawMessage `json:"robots"`
	}
	if err := json.Unmarshal(answer.Record, &record); err != nil {
		t.Fatalf("%s: %v", answer.Record, err)
	}
	digest := sha256.Sum256([]byte(siteRobots))
	if record.Format != "robotsd-record/1" || record.URL != s.URL+"/private/report" ||
		record.RobotsTxt.Allowed || record.RobotsTxt.SHA256 != hex.EncodeToString(digest[:]) ||
		record.RobotsTxt.Rule == nil || record.RobotsTxt.Rule.Line != 2 || string(record.Robots) != "null" {
		t.Fatalf("record %s", answer.Record)
	}
}

func TestProblemsAreTypedErrors(t *testing.T) {
	client := startRobotsd(t)
	_, err := client.Check(context.Background(), "ftp://example.com/", "ExampleBot")
	problem, ok := IsProblem(err)
	if !ok || problem.Status != 400 || problem.Type != "urn:robotsd:problem:unsupported-scheme" {
		t.Fatalf("%v", err)
	}
	results, err := client.CheckMany(context.Background(), []string{"ExampleBot"}, []string{"ftp://example.com/"})
	if err != nil || len(results) != 1 || results[0].Problem == nil {
		t.Fatalf("%+v %v", results, err)
	}
}

func TestAnUnreachableRobotsdFailsClosedUnlessToldOtherwise(t *testing.T) {
	s := startSite(t)
	down := New(fmt.Sprintf("http://127.0.0.1:%d", freePort(t)))
	closed := &http.Client{Transport: &Transport{Client: down}}
	_, err := closed.Get(s.URL + "/p/1")
	var unavailable *UnavailableError
	if !errors.As(err, &unavailable) || s.hits("/p/1") != 0 {
		t.Fatalf("want an *UnavailableError and no fetch, got %v", err)
	}
	open := &http.Client{Transport: &Transport{Client: down, FailOpen: true}}
	resp, err := open.Get(s.URL + "/p/1")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if s.hits("/p/1") != 1 {
		t.Fatal("FailOpen did not let the request through")
	}
}

// The Go types and robotsd's OpenAPI document cannot drift: every property of the answer's
// schemas is a JSON field of the matching type, and nothing else is. A schema that is one of
// several objects (a feedback result: the state, or the problem) has the properties of them all.
// hostileRobots is a robots.txt made so that every full answer about it is large, whatever
// robotsd cuts: 20 user-agent lines of 16,000 control characters (robotsd shows 16 of them, each
// cut at 256 bytes of JSON, a control character taking 6), an allow of 16,000 wildcards (its
// pattern cut at 2,048 bytes) and a longer disallow for the paths under /d. 352 KB, within the
// 500 KiB robotsd keeps.
func hostileRobots() string {
	long := strings.Repeat("\u0001", 16000)
	return strings.Repeat("user-agent: a"+long+"\n", 20) +
		"allow: /" + strings.Repeat("*", 16000) + "\n" +
		"disallow: /d" + strings.Repeat("*", 16000) + "\n"
}

func TestABatchCutAtItsBoundGivesVerdictsPastIt(t *testing.T) {
	robots := hostileRobots()
	var robotsHits int
	var mu sync.Mutex
	hostile := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		mu.Lock()
		robotsHits++
		mu.Unlock()
		fmt.Fprint(w, robots)
	}))
	t.Cleanup(hostile.Close)
	// Each full answer is 6 KB and more, and echoes a URL of 4 KB: robotsd's answer to a batch
	// of 1,000 reaches its 8 MiB bound, and goes on in verdicts. The request is over 4 MB.
	client := startRobotsd(t, "--max-body-bytes", "8MiB")
	var urls []string
	for i := 0; i < 1000; i++ {
		first := "x"
		if i%3 == 0 {
			first = "d"
		}
		urls = append(urls, fmt.Sprintf("%s/%s%s%d", hostile.URL, first, strings.Repeat("x", 4000), i))
	}
	results, err := client.CheckMany(context.Background(), []string{"a"}, urls)
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != len(urls) {
		t.Fatalf("%d results for %d URLs", len(results), len(urls))
	}
	full := 0
	for full < len(results) && results[full].Answer != nil && results[full].Answer.Full() {
		full++
	}
	if full <= 100 || full >= len(urls) {
		t.Fatalf("%d full answers of %d", full, len(urls))
	}
	for i, result := range results {
		answer := result.Answer
		if answer == nil {
			t.Fatalf("%d: a problem: %+v", i, result.Problem)
		}
		// From the first verdict on, every answer is a verdict, and every verdict is right.
		if answer.Full() != (i < full) {
			t.Errorf("%d: Full() is %v, the first %d are full", i, answer.Full(), full)
		}
		if i >= full && (answer.Rule != nil || answer.Group != nil || answer.URL != "") {
			t.Errorf("%d: a verdict alone has more: %+v", i, answer)
		}
		disallowed := strings.HasPrefix(urls[i], hostile.URL+"/d")
		if answer.Allowed == disallowed || answer.Reason != "matched_rule" {
			t.Errorf("%d: allowed %v (%s), want %v", i, answer.Allowed, answer.Reason, !disallowed)
		}
	}

	// The bounds of each full answer: 16 of the 20 agents, each cut, and the pattern.
	first := results[0].Answer
	if first.Group == nil || !first.Group.Truncated || first.Group.AgentsTotal != 20 || len(first.Group.Agents) != 16 {
		t.Errorf("group: %+v", first.Group)
	}
	if first.Rule == nil || !first.Rule.Truncated || len(first.Rule.Pattern) != 2048 || first.Rule.Directive != "disallow" {
		t.Errorf("rule: %+v", first.Rule)
	}
	mu.Lock()
	defer mu.Unlock()
	if robotsHits != 1 {
		t.Errorf("robots.txt fetched %d times", robotsHits)
	}
}

func TestTheTypesMatchTheOpenAPIDocument(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "openapi", "openapi.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Properties map[string]json.RawMessage `json:"properties"`
				OneOf      []struct {
					Properties map[string]json.RawMessage `json:"properties"`
					Ref        string                     `json:"$ref"`
				} `json:"oneOf"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	for schema, value := range map[string]any{
		"CheckResponse":    Answer{},
		"RobotsSourceJson": Source{},
		"ChallengeJson":    Challenge{},
		"RuleJson":         Rule{},
		"GroupJson":        Group{},
		"AgentJson":        Agent{},
		"UsageJson":        Usage{},
		"PreferenceJson":   Preference{},
		"BackoffJson":      Backoff{},
		"Problem":          Problem{},
		"PaceJson":         Pace{},
		"SignJson":         Signed{},
		"PaceStateJson":    PaceState{},
		"ReportItem":       Report{},
		"FeedbackRequest":  FeedbackRequest{},
		"FeedbackItem":     FeedbackResult{},
		"FeedbackResponse": FeedbackResponse{},
		"RobotsResponse":   Robots{},
		"ParsedJson":       Parsed{},
		"GroupDetailJson":  GroupDetail{},
		"AgentLineJson":    AgentLine{},
		"UsageLineJson":    UsageLine{},
		"SitemapJson":      Sitemap{},
		"LicenseJson":      License{},
		"RslJson":          RSLTerms{},
		"RslContentJson":   RSLContent{},
		"RslLicenseJson":   RSLLicense{},
		"RslScopeJson":     RSLScope{},
		"RslPaymentJson":   RSLPayment{},
		"RslAmountJson":    RSLAmount{},
		"RslSourceJson":    RSLSource{},
		"RslBackoffJson":   RSLBackoff{},
		"DiagnosticJson":   Diagnostic{},

		// POST /v1/page
		"PageRequest":            PageRequest{},
		"PageResponse":           PageAnswer{},
		"PageRobotsJson":         PageRobots{},
		"PageRuleJson":           PageRule{},
		"PageUsageJson":          PageUsage{},
		"ContentUsageHeaderJson": ContentUsageHeader{},
		"TdmJson":                TDM{},
		"WellKnownJson":          WellKnownFile{},
		"CombinedJson":           CombinedUsage{},
	} {
		documentedSet := map[string]bool{}
		for name := range doc.Components.Schemas[schema].Properties {
			documentedSet[name] = true
		}
		for _, one := range doc.Components.Schemas[schema].OneOf {
			properties := one.Properties
			if ref := strings.TrimPrefix(one.Ref, "#/components/schemas/"); ref != "" {
				properties = doc.Components.Schemas[ref].Properties
			}
			for name := range properties {
				documentedSet[name] = true
			}
		}
		if len(documentedSet) == 0 {
			t.Errorf("%s: no such schema with properties in the OpenAPI document", schema)
		}
		var documented []string
		for name := range documentedSet {
			documented = append(documented, name)
		}
		var fields []string
		typ := reflect.TypeOf(value)
		for i := 0; i < typ.NumField(); i++ {
			fields = append(fields, strings.Split(typ.Field(i).Tag.Get("json"), ",")[0])
		}
		sort.Strings(documented)
		sort.Strings(fields)
		if !reflect.DeepEqual(documented, fields) {
			t.Errorf("%s: OpenAPI has %v, the Go type %s has %v", schema, documented, typ.Name(), fields)
		}
	}
}
