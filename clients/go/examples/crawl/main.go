// Command crawl is a small breadth-first crawler that asks robotsd before every request through
// robotsd.Transport, as any Go crawler (Colly through c.WithTransport) would, and after every
// fetch about the page itself (robotsd.Client.Page): it follows the links of one origin from
// -start, except those of a page whose X-Robots-Tag header or robots meta tag says nofollow
// for it. It prints one line of JSON: the paths it fetched, the paths robotsd refused, and the
// fetched pages that said nofollow and noindex, each sorted.
//
// It does not sleep between requests itself: the Transport paces them. By default each request
// takes a fetch slot robotsd reserves for the whole fleet (the site's crawl-delay, or robotsd's
// --default-crawl-delay where it states none); with --no-pace the Transport keeps the
// crawl-delay robotsd reports between this crawler's own requests.
//
// With --sign, robotsd signs each request for the fleet (Web Bot Auth: robotsd.Transport.Sign;
// robotsd runs with --wba-keys), and the crawl stops at a robotsd that cannot sign.
//
//	go run ./examples/crawl --robotsd http://127.0.0.1:8080 --start http://127.0.0.1:8000/ --ua ExampleBot
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"sort"
	"time"

	robotsd "github.com/robotsd/robotsd/clients/go"
)

// The pages are plain HTML of the crawler's own test site; a regular expression is enough to
// find their links, and keeps the module free of dependencies.
var link = regexp.MustCompile(`href="([^"]+)"`)

func main() {
	robotsdURL := flag.String("robotsd", "", "robotsd's base URL")
	start := flag.String("start", "", "the page to start from")
	ua := flag.String("ua", "", "the crawler's user agent")
	noPace := flag.Bool("no-pace", false, "no fleet pacing: keep the crawl-delay for this crawler alone (robotsd.Transport.NoPacing)")
	sign := flag.Bool("sign", false, "have robotsd sign every request, Web Bot Auth (robotsd.Transport.Sign)")
	flag.Parse()
	if *robotsdURL == "" || *start == "" || *ua == "" {
		flag.Usage()
		os.Exit(2)
	}
	result, err := crawl(robotsd.New(*robotsdURL), *start, *ua, *noPace, *sign)
	if err != nil {
		log.Fatal(err)
	}
	out, _ := json.Marshal(result)
	fmt.Println(string(out))
}

// result is what a crawl printed: paths, each list sorted.
type result struct {
	Fetched    []string `json:"fetched"`
	Disallowed []string `json:"disallowed"`
	// NoFollow are the fetched pages whose links were not followed, NoIndex those an indexer
	// would leave out: their own rules (X-Robots-Tag, robots meta tags) said so.
	NoFollow []string `json:"nofollow"`
	NoIndex  []string `json:"noindex"`
}

func crawl(client *robotsd.Client, start, ua string, noPacing, sign bool) (*result, error) {
	origin, err := url.Parse(start)
	if err != nil {
		return nil, err
	}
	crawler := &http.Client{
		// The wait for a request's slot counts against this limit too.
		Timeout: 90 * time.Second,
		Transport: &robotsd.Transport{
			Client:    client,
			UserAgent: ua,
			NoPacing:  noPacing,
			Sign:      sign,
		},
	}
	out := &result{Fetched: []string{}, Disallowed: []string{}, NoFollow: []string{}, NoIndex: []string{}}
	seen := map[string]bool{origin.String(): true}
	queue := []*url.URL{origin}
	for len(queue) > 0 {
		page := queue[0]
		queue = queue[1:]
		req, err := http.NewRequest(http.MethodGet, page.String(), nil)
		if err != nil {
			return nil, err
		}
		req.Header.Set("User-Agent", ua)
		resp, err := crawler.Do(req)
		var refused *robotsd.DisallowedError
		if errors.As(err, &refused) {
			log.Printf("skipped: %v", refused)
			out.Disallowed = append(out.Disallowed, page.Path)
			continue
		}
		if err != nil {
			return nil, err
		}
		// robotsd reads a document's first 2 MiB; one byte more tells it the page was longer.
		body, err := io.ReadAll(io.LimitReader(resp.Body, robotsd.MaxPageDocumentBytes+1))
		resp.Body.Close()
		if err != nil {
			return nil, err
		}
		out.Fetched = append(out.Fetched, page.Path)
		// The page's own rules for this crawler, now that it has them.
		answer, err := client.Page(context.Background(), ua, resp, body)
		if err != nil {
			// Its rules are unknown: its links are not followed (fail closed, as the Transport).
			log.Printf("no answer about %s: %v", page, err)
			continue
		}
		if !answer.Index() {
			out.NoIndex = append(out.NoIndex, page.Path)
		}
		if !answer.Follow() {
			log.Printf("not following the links of %s: nofollow", page)
			out.NoFollow = append(out.NoFollow, page.Path)
			continue
		}
		// Links are relative to the page that answered, after any redirect.
		base := resp.Request.URL
		for _, m := range link.FindAllStringSubmatch(string(body), -1) {
			next, err := base.Parse(m[1])
			if err != nil || next.Scheme != origin.Scheme || next.Host != origin.Host {
				continue
			}
			next.Fragment = ""
			if !seen[next.String()] {
				seen[next.String()] = true
				queue = append(queue, next)
			}
		}
	}
	for _, list := range [][]string{out.Fetched, out.Disallowed, out.NoFollow, out.NoIndex} {
		sort.Strings(list)
	}
	return out, nil
}
