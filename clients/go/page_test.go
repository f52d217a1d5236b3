package robotsd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// The robots.txt of the page tests' sites: a disallowed directory, robots.txt's own AI-use
// statement, and a short crawl-delay.
const pageRobots = `User-agent: *
Disallow: /private/
Content-Usage: train-ai=y
Crawl-delay: 0.01
`

// pageSite is a loopback site serving pageRobots and the pages given, recording the paths
// fetched (robots.txt apart).
type pageSite struct {
	*httptest.Server
	mu      sync.Mutex
	fetched map[string]int
}

func startPageSite(t *testing.T, pages map[string]http.HandlerFunc) *pageSite {
	s := &pageSite{fetched: map[string]int{}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			fmt.Fprint(w, pageRobots)
			return
		}
		s.mu.Lock()
		s.fetched[r.URL.Path]++
		s.mu.Unlock()
		if page := pages[r.URL.Path]; page != nil {
			page(w, r)
			return
		}
		http.NotFound(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *pageSite) pages() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var pages []string
	for p := range s.fetched {
		pages = append(pages, p)
	}
	sort.Strings(pages)
	return pages
}

// servePage is a handler answering a document with the headers given, in order.
func servePage(document string, headers ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		for i := 0; i+1 < len(headers); i += 2 {
			w.Header().Add(headers[i], headers[i+1])
		}
		if _, ok := w.Header()["Content-Type"]; !ok {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
		}
		fmt.Fprint(w, document)
	}
}

// fetch GETs url as ExampleBot, without robotsd, and returns the response and its body.
func fetch(t *testing.T, url string) (*http.Response, []byte) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("User-Agent", "Mozilla/5.0 (compatible; ExampleBot/1.0; +https://crawler.example/bot)")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

// recordPages makes client record the body of each POST /v1/page it sends.
func recordPages(t *testing.T, client *Client) func() []PageRequest {
	var mu sync.Mutex
	var sent []PageRequest
	base := client.HTTPClient.Transport
	client.HTTPClient.Transport = roundTripFunc(func(req *http.Request) (*http.Response, error) {
		if req.URL.Path == "/v1/page" {
			body, err := io.ReadAll(req.Body)
			if err != nil {
				return nil, err
			}
			var page PageRequest
			if err := json.Unmarshal(body, &page); err != nil {
				t.Errorf("the page sent is not a PageRequest: %v", err)
			}
			mu.Lock()
			sent = append(sent, page)
			mu.Unlock()
			req.Body = io.NopCloser(bytes.NewReader(body))
		}
		return base.RoundTrip(req)
	})
	return func() []PageRequest {
		mu.Lock()
		defer mu.Unlock()
		return append([]PageRequest(nil), sent...)
	}
}

func str(s string) *string { return &s }

// text is *s, or "<nil>", for a failure's message.
func text(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

// ruleList is rules as comparable text: "rule|agent|header h|line l|ignored".
func ruleList(rules []PageRule) []string {
	var out []string
	for _, r := range rules {
		item := r.Rule + "|"
		if r.Agent != nil {
			item += *r.Agent
		}
		if r.Header != nil {
			item += fmt.Sprintf("|header %d", *r.Header)
		}
		if r.Line != nil {
			item += fmt.Sprintf("|line %d", *r.Line)
		}
		if r.Ignored != "" {
			item += "|" + r.Ignored
		}
		out = append(out, item)
	}
	return out
}

// The document of TestAPagesRulesForTheCrawlerFromItsHeadersAndMetaTags: a general rule, one
// for another agent, one for ExampleBot over two lines, and tags that are text (a comment, a
// script).
const articleHTML = `<!DOCTYPE html>
<html><head><title>An article</title>
<meta name="robots" content="max-image-preview:standard">
<meta name="otherbot" content="noindex, nofollow">
<meta name="ExampleBot"
  content="noarchive, max-snippet:20">
<!-- <meta name="robots" content="noindex"> -->
<script>document.write('<meta name="robots" content="none">')</script>
</head><body><a href="/next">next</a></body></html>
`

func TestAPagesRulesForTheCrawlerFromItsHeadersAndMetaTags(t *testing.T) {
	s := startPageSite(t, map[string]http.HandlerFunc{
		"/old": func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "/article", http.StatusMovedPermanently)
		},
		"/article": servePage(articleHTML,
			"X-Robots-Tag", "ExampleBot: nofollow",
			"X-Robots-Tag", "OtherBot: noindex, unavailable_after: 2020-09-21",
			"X-Robots-Tag", "unavailable_after: Thu, 03 Dec 2099 13:09:53 GMT",
			"Content-Usage", "train-ai=n",
			"Tdm-Reservation", "1",
			"Tdm-Policy", "https://provider.example/policy.json",
		),
	})
	client := startRobotsd(t)
	// Fetched through a redirect: the page is the response's, resp.Request.URL.
	resp, body := fetch(t, s.URL+"/old")
	// No ua: the request's User-Agent header, whose product token is ExampleBot.
	answer, err := client.Page(context.Background(), "", resp, body)
	if err != nil {
		t.Fatal(err)
	}
	if !answer.Allowed || !answer.Check.Allowed || answer.Check.URL != s.URL+"/article" {
		t.Fatalf("robots.txt's answer: %+v", answer.Check)
	}
	if answer.Encoding == nil || *answer.Encoding != "UTF-8" || answer.DocumentCut {
		t.Fatalf("encoding %s, cut %v", text(answer.Encoding), answer.DocumentCut)
	}
	r := answer.Robots
	if r == nil {
		t.Fatal("no robots rules")
	}
	// OtherBot's noindex and its date are not ExampleBot's; its nofollow is, from the header.
	if !r.Index || r.Follow || !r.Snippet || !r.ImageIndex || !r.Translate || r.IndexIfEmbedded {
		t.Fatalf("robots %+v", r)
	}
	if r.MaxSnippet == nil || *r.MaxSnippet != 20 || r.MaxImagePreview == nil || *r.MaxImagePreview != "standard" ||
		r.MaxVideoPreview != nil || r.UnavailableAfter == nil || *r.UnavailableAfter != "2099-12-03T13:09:53Z" {
		t.Fatalf("robots %+v", r)
	}
	if !reflect.DeepEqual(r.Uninterpreted, []string{"noarchive"}) || r.RulesTotal != 0 {
		t.Fatalf("uninterpreted %v, rules_total %d", r.Uninterpreted, r.RulesTotal)
	}
	// Headers first, by their position among those sent; then the tags, by the line each ends on.
	want := []string{
		"nofollow|ExampleBot|header 0",
		"unavailable_after: Thu, 03 Dec 2099 13:09:53 GMT||header 2",
		"max-image-preview:standard||line 3",
		"noarchive|examplebot|line 6",
		"max-snippet:20|examplebot|line 6",
	}
	if got := ruleList(r.Rules); !reflect.DeepEqual(got, want) {
		t.Fatalf("rules\n%q\nwant\n%q", got, want)
	}
	if answer.Follow() || !answer.Index() {
		t.Fatalf("Follow() %v, Index() %v", answer.Follow(), answer.Index())
	}

	u := answer.Usage
	if u == nil || u.RobotsTxt == nil || u.RobotsTxt.ContentUsage["train-ai"].Value != "y" {
		t.Fatalf("usage %+v", u)
	}
	header := ContentUsageHeader{State: ContentUsageStated, Categories: map[string]string{"train-ai": "n"}, Headers: []int{3}}
	if !reflect.DeepEqual(u.ContentUsageHeader, header) {
		t.Fatalf("content_usage_header %+v", u.ContentUsageHeader)
	}
	combined := map[string]CombinedUsage{
		"train-ai": {Value: str("n"), Sources: []string{"robots_txt", "header"}},
		"ai-use":   {Value: nil, Sources: []string{}},
		"search":   {Value: nil, Sources: []string{}},
	}
	if !reflect.DeepEqual(u.Combined, combined) {
		t.Fatalf("combined %+v", u.Combined)
	}
	reserved := true
	tdm := TDM{Reservation: &reserved, Source: str("header"), Policy: str("https://provider.example/policy.json"), PolicySource: str("header"), Invalid: []string{}}
	if !reflect.DeepEqual(u.TDM, tdm) {
		t.Fatalf("tdm %+v", u.TDM)
	}
}

func TestOnlyTheHeadersRobotsdReadsAreSentAndOnlyAnHTMLDocument(t *testing.T) {
	s := startPageSite(t, map[string]http.HandlerFunc{
		"/page": servePage(`<meta name="robots" content="noimageindex">`,
			"Set-Cookie", "session=secret",
			"X-Robots-Tag", "noindex",
			"Link", "</style.css>; rel=preload",
			"Content-Usage", "train-ai=n",
			"x-robots-tag", "nosnippet",
			"Content-Usage", "search=y",
			"Content-Type", "application/xhtml+xml",
			"Server", "test",
		),
		// A PDF: its X-Robots-Tag counts, its bytes are not HTML and are not sent.
		"/report.pdf": servePage("%PDF-1.4 <meta name=\"robots\" content=\"nofollow\">",
			"Content-Type", "application/pdf",
			"X-Robots-Tag", "noindex",
		),
		// No Content-Type at all: the bytes are sniffed, and these are HTML.
		"/bare": func(w http.ResponseWriter, _ *http.Request) {
			w.Header()["Content-Type"] = nil
			fmt.Fprint(w, "<!DOCTYPE html><html><head><meta name=\"robots\" content=\"nofollow\"></head></html>")
		},
	})
	client := startRobotsd(t)
	sent := recordPages(t, client)
	ctx := context.Background()

	resp, body := fetch(t, s.URL+"/page")
	answer, err := client.Page(ctx, "ExampleBot", resp, body)
	if err != nil {
		t.Fatal(err)
	}
	headers := [][2]string{
		{"X-Robots-Tag", "noindex"},
		{"X-Robots-Tag", "nosnippet"},
		{"Content-Usage", "train-ai=n"},
		{"Content-Usage", "search=y"},
		{"Content-Type", "application/xhtml+xml"},
	}
	if got := sent()[0]; !reflect.DeepEqual(got.Headers, headers) || string(got.HTMLBase64) != string(body) ||
		got.HTML != "" || got.URL != s.URL+"/page" || !reflect.DeepEqual(got.UA, []string{"ExampleBot"}) {
		t.Fatalf("sent %+v", got)
	}
	if got := PageHeaders(resp.Header); !reflect.DeepEqual(got, headers) {
		t.Fatalf("PageHeaders %q", got)
	}
	if got, want := ruleList(answer.Robots.Rules), []string{"noindex||header 0", "nosnippet||header 1", "noimageindex||line 1"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("rules %q, want %q", got, want)
	}
	if r := answer.Robots; r.Index || r.Snippet || r.MaxSnippet == nil || *r.MaxSnippet != 0 || r.ImageIndex || !r.Follow {
		t.Fatalf("robots %+v", r)
	}
	header := ContentUsageHeader{State: ContentUsageStated, Categories: map[string]string{"train-ai": "n", "search": "y"}, Headers: []int{2, 3}}
	if !reflect.DeepEqual(answer.Usage.ContentUsageHeader, header) {
		t.Fatalf("content_usage_header %+v", answer.Usage.ContentUsageHeader)
	}

	resp, body = fetch(t, s.URL+"/report.pdf")
	answer, err = client.Page(ctx, "ExampleBot", resp, body)
	if err != nil {
		t.Fatal(err)
	}
	if got := sent()[1]; got.HTMLBase64 != nil || got.HTML != "" ||
		!reflect.DeepEqual(got.Headers, [][2]string{{"X-Robots-Tag", "noindex"}, {"Content-Type", "application/pdf"}}) {
		t.Fatalf("sent %+v", got)
	}
	if answer.Encoding != nil || answer.Index() || !answer.Follow() {
		t.Fatalf("the PDF: encoding %s, robots %+v", text(answer.Encoding), answer.Robots)
	}

	resp, body = fetch(t, s.URL+"/bare")
	answer, err = client.Page(ctx, "ExampleBot", resp, body)
	if err != nil {
		t.Fatal(err)
	}
	if got := sent()[2]; len(got.Headers) != 0 || string(got.HTMLBase64) != string(body) {
		t.Fatalf("sent %+v", got)
	}
	if answer.Encoding == nil || answer.Follow() {
		t.Fatalf("the page without a Content-Type: encoding %s, robots %+v", text(answer.Encoding), answer.Robots)
	}
}

func TestAPageIsReadInItsOwnCharset(t *testing.T) {
	// Latin-1 bytes: é is 0xE9, not UTF-8. "café" is no rule: listed, ignored, as written.
	latin1 := "<html><head><title>Caf\xe9</title>\n<meta name=\"robots\" content=\"noindex, caf\xe9\"></head></html>"
	s := startPageSite(t, map[string]http.HandlerFunc{
		"/header": servePage(latin1, "Content-Type", "text/html; charset=iso-8859-1"),
		"/meta":   servePage("<meta charset=\"iso-8859-1\">\n"+latin1, "Content-Type", "text/html"),
	})
	client := startRobotsd(t)
	for path, line := range map[string]int{"/header": 2, "/meta": 3} {
		resp, body := fetch(t, s.URL+path)
		answer, err := client.Page(context.Background(), "ExampleBot", resp, body)
		if err != nil {
			t.Fatal(err)
		}
		// WHATWG's Encoding Standard reads iso-8859-1 as windows-1252.
		if answer.Encoding == nil || *answer.Encoding != "windows-1252" {
			t.Fatalf("%s: encoding %s", path, text(answer.Encoding))
		}
		want := []string{fmt.Sprintf("noindex||line %d", line), fmt.Sprintf("café||line %d|unknown", line)}
		if got := ruleList(answer.Robots.Rules); !reflect.DeepEqual(got, want) || answer.Index() {
			t.Fatalf("%s: rules %q, want %q", path, got, want)
		}
	}
}

func TestAPageOverTwoMiBIsReadInPart(t *testing.T) {
	// A tag at its start counts; one past 2 MiB is not read.
	long := "<meta name=robots content=nofollow>\n" + strings.Repeat("<p>filler</p>\n", 3<<20/14) +
		"<meta name=robots content=noindex>\n"
	s := startPageSite(t, map[string]http.HandlerFunc{"/long": servePage(long)})
	client := startRobotsd(t)
	sent := recordPages(t, client)
	resp, body := fetch(t, s.URL+"/long")
	if len(body) < 3<<20 {
		t.Fatalf("a body of %d bytes", len(body))
	}
	// The whole body, or its first 2 MiB and a byte: the same page, cut.
	for _, given := range [][]byte{body, body[:MaxPageDocumentBytes+1]} {
		answer, err := client.Page(context.Background(), "ExampleBot", resp, given)
		if err != nil {
			t.Fatal(err)
		}
		if !answer.DocumentCut || answer.Follow() || !answer.Index() {
			t.Fatalf("document_cut %v, robots %+v", answer.DocumentCut, answer.Robots)
		}
	}
	for _, page := range sent() {
		if !bytes.Equal(page.HTMLBase64, body[:MaxPageDocumentBytes]) {
			t.Fatalf("%d bytes sent, not the first %d", len(page.HTMLBase64), MaxPageDocumentBytes)
		}
	}
	// Exactly 2 MiB is not cut.
	answer, err := client.Page(context.Background(), "ExampleBot", resp, body[:MaxPageDocumentBytes])
	if err != nil || answer.DocumentCut || answer.Follow() {
		t.Fatalf("%+v %v", answer, err)
	}
}

func TestTheRulesOfAPageRobotsTxtDisallowsAreNotRead(t *testing.T) {
	s := startPageSite(t, map[string]http.HandlerFunc{
		"/private/page": servePage(`<meta name="robots" content="none">`, "X-Robots-Tag", "noindex", "Content-Usage", "train-ai=n"),
	})
	client := startRobotsd(t)
	resp, body := fetch(t, s.URL+"/private/page")
	answer, err := client.Page(context.Background(), "ExampleBot", resp, body)
	if err != nil {
		t.Fatal(err)
	}
	if answer.Allowed || answer.Check.Allowed || answer.Check.Rule == nil || answer.Check.Rule.Line != 2 ||
		answer.Robots != nil || answer.Usage != nil {
		t.Fatalf("answer %+v, check %+v", answer, answer.Check)
	}
	// Nothing forbids following its links: each is checked against robots.txt in its turn.
	var none *PageAnswer
	if !answer.Follow() || !answer.Index() || !none.Follow() || !none.Index() {
		t.Fatal("no rules read, yet a rule")
	}
	// A response without its request has no URL.
	if _, err := client.Page(context.Background(), "ExampleBot", &http.Response{Header: http.Header{}}, nil); err == nil {
		t.Fatal("a page without a URL was asked about")
	}
	// What robotsd refuses is a Problem.
	huge := &http.Response{
		Request: resp.Request,
		Header:  http.Header{"X-Robots-Tag": {strings.Repeat("noindex, ", 2000)}},
	}
	_, err = client.Page(context.Background(), "ExampleBot", huge, nil)
	if problem, ok := IsProblem(err); !ok || problem.Status != 400 || problem.Type != "urn:robotsd:problem:invalid-page" {
		t.Fatalf("a header over 16 KiB: %v", err)
	}
}

// links is a page of the crawl's site: links to paths.
func links(paths ...string) string {
	var b strings.Builder
	b.WriteString("<!DOCTYPE html>\n<html><head>")
	for _, p := range paths {
		fmt.Fprintf(&b, "<a href=\"%s\">%s</a>\n", p, p)
	}
	return b.String()
}

// pageCrawl is a crawler as TestACrawlThroughTheTransportFetchesExactlyWhatRobotsdAllows's, that
// asks robotsd about each page it fetched and follows its links only when the page allows it.
func pageCrawl(t *testing.T, client *Client, start, ua string) (nofollow []string) {
	crawler := &http.Client{Transport: &Transport{Client: client, UserAgent: ua}, Timeout: 30 * time.Second}
	seen := map[string]bool{start: true}
	queue := []string{start}
	for len(queue) > 0 {
		page := queue[0]
		queue = queue[1:]
		req, _ := http.NewRequest(http.MethodGet, page, nil)
		resp, err := crawler.Do(req)
		var disallowed *DisallowedError
		if errors.As(err, &disallowed) {
			continue
		}
		if err != nil {
			t.Fatalf("GET %s: %v", page, err)
		}
		body, err := io.ReadAll(io.LimitReader(resp.Body, MaxPageDocumentBytes+1))
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		answer, err := client.Page(context.Background(), ua, resp, body)
		if err != nil {
			t.Fatalf("page %s: %v", page, err)
		}
		if !answer.Follow() {
			nofollow = append(nofollow, resp.Request.URL.Path)
			continue
		}
		for _, m := range link.FindAllStringSubmatch(string(body), -1) {
			next := strings.TrimSuffix(start, "/") + m[1]
			if !seen[next] {
				seen[next] = true
				queue = append(queue, next)
			}
		}
	}
	sort.Strings(nofollow)
	return nofollow
}

func TestACrawlDoesNotFollowTheLinksOfANofollowPage(t *testing.T) {
	s := startPageSite(t, map[string]http.HandlerFunc{
		"/":          servePage(links("/a", "/meta", "/header", "/other", "/mixed", "/private/p")),
		"/a":         servePage(links("/a/1")),
		"/a/1":       servePage(links("/")),
		"/meta":      servePage(`<meta name="robots" content="nofollow">` + links("/hidden/1")),
		"/header":    servePage(links("/hidden/2"), "X-Robots-Tag", "ExampleBot: none"),
		"/other":     servePage(`<meta name="otherbot" content="nofollow">`+links("/other/1"), "X-Robots-Tag", "OtherBot: nofollow"),
		"/other/1":   servePage("the end"),
		"/mixed":     servePage(`<meta name="robots" content="noindex"><meta name="examplebot" content="nofollow">` + links("/hidden/3")),
		"/private/p": servePage(links("/hidden/4")),
		"/hidden/1":  servePage("not to be fetched"),
		"/hidden/2":  servePage("not to be fetched"),
		"/hidden/3":  servePage("not to be fetched"),
		"/hidden/4":  servePage("not to be fetched"),
	})
	client := startRobotsd(t)
	nofollow := pageCrawl(t, client, s.URL+"/", "ExampleBot")
	if want := []string{"/header", "/meta", "/mixed"}; !reflect.DeepEqual(nofollow, want) {
		t.Fatalf("nofollow pages %v, want %v", nofollow, want)
	}
	want := []string{"/", "/a", "/a/1", "/header", "/meta", "/mixed", "/other", "/other/1"}
	if got := s.pages(); !reflect.DeepEqual(got, want) {
		t.Fatalf("fetched %v, want %v", got, want)
	}
}
