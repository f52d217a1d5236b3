// Command crawl is a small breadth-first crawler that asks robotsd before every request through
// robotsd.Transport, as any Go crawler (Colly through c.WithTransport) would. It follows the
// links of one origin from -start and prints one line of JSON: the paths it fetched and the
// paths robotsd refused, each sorted.
//
// It does not sleep between requests itself: the Transport paces them. By default each request
// takes a fetch slot robotsd reserves for the whole fleet (the site's crawl-delay, or robotsd's
// --default-crawl-delay where it states none); with --no-pace the Transport keeps the
// crawl-delay robotsd reports between this crawler's own requests.
//
//	go run ./examples/crawl --robotsd http://127.0.0.1:8080 --start http://127.0.0.1:8000/ --ua ExampleBot
package main

import (
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
	flag.Parse()
	if *robotsdURL == "" || *start == "" || *ua == "" {
		flag.Usage()
		os.Exit(2)
	}
	fetched, disallowed, err := crawl(robotsd.New(*robotsdURL), *start, *ua, *noPace)
	if err != nil {
		log.Fatal(err)
	}
	sort.Strings(fetched)
	sort.Strings(disallowed)
	out, _ := json.Marshal(map[string][]string{"fetched": fetched, "disallowed": disallowed})
	fmt.Println(string(out))
}

func crawl(client *robotsd.Client, start, ua string, noPacing bool) (fetched, disallowed []string, err error) {
	origin, err := url.Parse(start)
	if err != nil {
		return nil, nil, err
	}
	crawler := &http.Client{
		// The wait for a request's slot counts against this limit too.
		Timeout: 90 * time.Second,
		Transport: &robotsd.Transport{
			Client:    client,
			UserAgent: ua,
			NoPacing:  noPacing,
		},
	}
	seen := map[string]bool{origin.String(): true}
	queue := []*url.URL{origin}
	for len(queue) > 0 {
		page := queue[0]
		queue = queue[1:]
		req, err := http.NewRequest(http.MethodGet, page.String(), nil)
		if err != nil {
			return nil, nil, err
		}
		req.Header.Set("User-Agent", ua)
		resp, err := crawler.Do(req)
		var refused *robotsd.DisallowedError
		if errors.As(err, &refused) {
			log.Printf("skipped: %v", refused)
			disallowed = append(disallowed, page.Path)
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		if err != nil {
			return nil, nil, err
		}
		fetched = append(fetched, page.Path)
		for _, m := range link.FindAllStringSubmatch(string(body), -1) {
			next, err := page.Parse(m[1])
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
	return fetched, disallowed, nil
}
