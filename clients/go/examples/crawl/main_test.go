package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"sync"
	"testing"
	"time"

	robotsd "github.com/robotsd/robotsd/clients/go"
)

// startRobotsd runs the robotsd binary named by ROBOTSD_BIN on a free loopback port, as the
// package's own tests do. A missing binary fails the test: it is never skipped.
func startRobotsd(t *testing.T, args ...string) *robotsd.Client {
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
	cmd := exec.Command(bin, append([]string{"--allow-private-networks", "--listen", addr}, args...)...)
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

	got, err := crawl(startRobotsd(t), site.URL+"/", "GoExampleBot", false, false)
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

// The signed crawl (--sign) of a site that verifies every signature it receives
// (tests/wba/verifying_site.py, run by the Python ROBOTSD_WBA_PYTHON names, as in the fleet
// test): its pages come from a JSON file, links relative to the page that answered, after a
// redirect too. Every request it gets verifies, and it gets none for the disallowed page.
func TestTheExampleCrawlerSignsEveryRequest(t *testing.T) {
	python := os.Getenv("ROBOTSD_WBA_PYTHON")
	if python == "" {
		t.Fatal("ROBOTSD_WBA_PYTHON must name a Python with .ci/wba-requirements.txt installed (.ci/client-checks.sh exports it)")
	}
	wba := filepath.Join("..", "..", "..", "..", "tests", "wba")
	directory := "https://bot.example/.well-known/http-message-signatures-directory"
	client := startRobotsd(t, "--wba-keys", filepath.Join(wba, "test-keys.json"), "--wba-agent", directory)
	pages, _ := json.Marshal(map[string]any{
		"/":           `<a href="a">a</a> <a href="/old">old</a> <a href="/private/1">private</a> <a href="/search?q=1">search</a>`,
		"/a":          `<a href="b">b</a>`,
		"/b":          `the end`,
		"/old":        map[string]string{"redirect": "/new/"},
		"/new/":       `<a href="page">page</a>`,
		"/new/page":   `the end`,
		"/search?q=1": `results`,
		"/private/1":  `not to be fetched`,
	})
	dir := t.TempDir()
	for name, content := range map[string][]byte{"pages.json": pages, "robots.txt": []byte("User-agent: *\nDisallow: /private/\nCrawl-delay: 0.01\n")} {
		if err := os.WriteFile(filepath.Join(dir, name), content, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(python, filepath.Join(wba, "verifying_site.py"), "--directory-url", directory,
		"--fetch-from", client.BaseURL+"/.well-known/http-message-signatures-directory",
		"--robots", filepath.Join(dir, "robots.txt"), "--pages", filepath.Join(dir, "pages.json"))
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	killed := false
	t.Cleanup(func() {
		if !killed {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	lines := bufio.NewScanner(stdout)
	var port int
	if !lines.Scan() {
		t.Fatal("the verifying site did not start")
	}
	if _, err := fmt.Sscanf(lines.Text(), "listening %d", &port); err != nil {
		t.Fatalf("the verifying site said %q", lines.Text())
	}

	got, err := crawl(client, fmt.Sprintf("http://127.0.0.1:%d/", port), "GoExampleBot", false, true)
	if err != nil {
		t.Fatal(err)
	}
	want := &result{
		Fetched:    []string{"/", "/a", "/b", "/new/page", "/old", "/search"},
		Disallowed: []string{"/private/1"},
		NoFollow:   []string{},
		NoIndex:    []string{},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("crawled %+v, want %+v", got, want)
	}
	// The crawl is over: the site's whole log is the lines printed until it is stopped.
	_ = cmd.Process.Kill()
	var requested []string
	for lines.Scan() {
		var request struct {
			Method   string `json:"method"`
			Path     string `json:"path"`
			Verified bool   `json:"verified"`
			Reason   string `json:"reason"`
		}
		if json.Unmarshal(lines.Bytes(), &request) != nil || request.Method == "" || request.Path == "/robots.txt" {
			continue
		}
		if !request.Verified {
			t.Errorf("%s %s was not verified: %s", request.Method, request.Path, request.Reason)
		}
		requested = append(requested, request.Path)
	}
	_ = cmd.Wait()
	killed = true
	sort.Strings(requested)
	if want := []string{"/", "/a", "/b", "/new/", "/new/page", "/old", "/search?q=1"}; !reflect.DeepEqual(requested, want) {
		t.Fatalf("the site got %v, want %v", requested, want)
	}
}
