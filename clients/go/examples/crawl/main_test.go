package main

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"reflect"
	"sort"
	"sync"
	"testing"
	"time"

	robotsd "github.com/robotsd/robotsd/clients/go"
)

// startRobotsd runs the robotsd binary named by ROBOTSD_BIN on a free loopback port, as the
// package's own tests do. A missing binary fails the test: it is never skipped.
func startRobotsd(t *testing.T) *robotsd.Client {
	bin := os.Getenv("ROBOTSD_BIN")
	if bin == "" {
		t.Fatal("ROBOTSD_BIN must name a robotsd binary (cargo build --release; .ci/client-checks.sh sets it)")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	cmd := exec.Command(bin, "--allow-private-networks", "--listen", addr)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	client := robotsd.New("http://" + addr)
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

// The example crawls a loopback site: robots.txt refuses /private/, a page's meta tag and
// another's X-Robots-Tag header say nofollow (their links are never fetched), a third page's
// nofollow is for another crawler, and a fourth says noindex.
func TestTheExampleCrawlerDoesNotFollowTheLinksOfANofollowPage(t *testing.T) {
	pages := map[string]string{
		"/":          `<a href="/a">a</a> <a href="/meta">meta</a> <a href="/header">header</a> <a href="/private/1">private</a>`,
		"/a":         `<meta name="robots" content="noindex"><a href="/a/1">a/1</a> <a href="/other">other</a>`,
		"/a/1":       `the end`,
		"/meta":      `<meta name="robots" content="nofollow"><a href="/hidden/1">hidden</a>`,
		"/header":    `<a href="/hidden/2">hidden</a>`,
		"/other":     `<meta name="otherbot" content="nofollow"><a href="/other/1">other/1</a>`,
		"/other/1":   `the end`,
		"/private/1": `<a href="/hidden/3">hidden</a>`,
		"/hidden/1":  `not to be fetched`,
		"/hidden/2":  `not to be fetched`,
		"/hidden/3":  `not to be fetched`,
	}
	var mu sync.Mutex
	fetched := map[string]int{}
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			fmt.Fprint(w, "User-agent: *\nDisallow: /private/\nCrawl-delay: 0.01\n")
			return
		}
		mu.Lock()
		fetched[r.URL.Path]++
		mu.Unlock()
		page, ok := pages[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		if r.URL.Path == "/header" {
			w.Header().Set("X-Robots-Tag", "GoExampleBot: nofollow")
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, "<!DOCTYPE html><html><body>"+page+"</body></html>")
	}))
	t.Cleanup(site.Close)

	got, err := crawl(startRobotsd(t), site.URL+"/", "GoExampleBot", false)
	if err != nil {
		t.Fatal(err)
	}
	want := &result{
		Fetched:    []string{"/", "/a", "/a/1", "/header", "/meta", "/other", "/other/1"},
		Disallowed: []string{"/private/1"},
		NoFollow:   []string{"/header", "/meta"},
		NoIndex:    []string{"/a"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("crawled %+v, want %+v", got, want)
	}
	mu.Lock()
	defer mu.Unlock()
	var paths []string
	for path, hits := range fetched {
		if hits != 1 {
			t.Errorf("%s fetched %d times", path, hits)
		}
		paths = append(paths, path)
	}
	sort.Strings(paths)
	if !reflect.DeepEqual(paths, want.Fetched) {
		t.Fatalf("the site served %v", paths)
	}
}
