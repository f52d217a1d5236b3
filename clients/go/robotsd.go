// Package robotsd is a client for robotsd, robots.txt as a service: may this user agent fetch
// this URL, and why. It uses the standard library only.
//
// A Client answers single and batch checks over one pooled connection set; a Transport wraps
// any http.RoundTripper so that every request a crawler makes is checked first, and a
// disallowed one fails with a *DisallowedError carrying the reason and the rule's line.
package robotsd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// MaxBatch is the most URLs robotsd answers in one batch; CheckMany splits longer lists.
const MaxBatch = 1000

// Client asks one robotsd service. It is safe for concurrent use.
type Client struct {
	// BaseURL is robotsd's address, such as "http://127.0.0.1:8080".
	BaseURL string
	// HTTPClient carries the requests; New gives one with a connection pool and a 30 s
	// timeout (robotsd answers within its own 30 s request limit).
	HTTPClient *http.Client
	// Token is sent as a bearer token when robotsd runs with --api-token-file.
	Token string
}

// New returns a Client for the robotsd at baseURL, with its own pooled transport.
func New(baseURL string) *Client {
	transport := &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        64,
		MaxIdleConnsPerHost: 64,
		IdleConnTimeout:     90 * time.Second,
	}
	return &Client{
		BaseURL:    strings.TrimRight(baseURL, "/"),
		HTTPClient: &http.Client{Transport: transport, Timeout: 30 * time.Second},
	}
}

// Rule is the robots.txt line that decided.
type Rule struct {
	Directive string `json:"directive"`
	Pattern   string `json:"pattern"`
	Line      int    `json:"line"`
}

// Group is the groups of robots.txt that applied, merged.
type Group struct {
	Agents []string `json:"agents"`
	Lines  []int    `json:"lines"`
	Global bool     `json:"global"`
}

// Agent is the user agents asked about, and the product token robotsd used for each.
type Agent struct {
	Input  []string `json:"input"`
	Tokens []string `json:"tokens"`
}

// Preference is one category's AI usage preference: "y" or "n", and the line that set it.
type Preference struct {
	Value string `json:"value"`
	Line  int    `json:"line"`
}

// Usage is the AI usage preferences that apply to the URL, each vocabulary apart, by label.
type Usage struct {
	ContentUsage  map[string]Preference `json:"content_usage"`
	ContentSignal map[string]Preference `json:"content_signal"`
}

// Backoff is a run of failures to fetch the origin's robots.txt.
type Backoff struct {
	Since     string `json:"since"`
	Failures  int    `json:"failures"`
	NextRetry string `json:"next_retry"`
	// Until is when the answer's reason changes if the origin stays unreachable: the end of
	// the window that disallows everything, or of the one that answers from the last good
	// copy; nil after both.
	Until     *string `json:"until"`
	LastError string  `json:"last_error"`
}

// Source is where the robots.txt behind an answer came from.
type Source struct {
	Status    *int     `json:"status"`
	FetchedAt *string  `json:"fetched_at"`
	SHA256    *string  `json:"sha256"`
	ExpiresAt *string  `json:"expires_at"`
	Bytes     *int     `json:"bytes"`
	FinalURL  *string  `json:"final_url"`
	Cache     string   `json:"cache"`
	Backoff   *Backoff `json:"backoff"`
}

// Answer is robotsd's answer to a check.
type Answer struct {
	Allowed   bool   `json:"allowed"`
	Verdict   string `json:"verdict"`
	Reason    string `json:"reason"`
	URL       string `json:"url"`
	RobotsURL string `json:"robots_url"`
	Agent     Agent  `json:"agent"`
	// Rule is nil when no rule matched.
	Rule  *Rule  `json:"rule"`
	Group *Group `json:"group"`
	// CrawlDelay is the applied groups' crawl-delay in seconds, nil when there is none.
	CrawlDelay *float64 `json:"crawl_delay"`
	Usage      *Usage   `json:"usage"`
	Robots     *Source  `json:"robots"`
}

// Problem is an RFC 9457 problem robotsd answered with; it is the error of a failed check.
type Problem struct {
	Type      string `json:"type"`
	Title     string `json:"title"`
	Status    int    `json:"status"`
	Detail    string `json:"detail"`
	Parameter string `json:"parameter,omitempty"`
}

func (p *Problem) Error() string {
	return fmt.Sprintf("robotsd: %s (%d): %s", p.Title, p.Status, p.Detail)
}

// Result is one answer of a batch: an Answer, or the Problem with that item.
type Result struct {
	Answer  *Answer
	Problem *Problem
}

// Check asks whether the agent(s) may fetch rawURL.
func (c *Client) Check(ctx context.Context, rawURL string, ua ...string) (*Answer, error) {
	query := url.Values{"url": {rawURL}, "ua": ua}
	var answer Answer
	if err := c.do(ctx, http.MethodGet, "/v1/check?"+query.Encode(), nil, &answer); err != nil {
		return nil, err
	}
	return &answer, nil
}

// CheckMany asks about many URLs for the same agent(s) with POST /v1/check, MaxBatch at a
// time, and returns one Result per URL, in order.
func (c *Client) CheckMany(ctx context.Context, ua []string, urls []string) ([]Result, error) {
	results := make([]Result, 0, len(urls))
	for start := 0; start < len(urls); start += MaxBatch {
		end := start + MaxBatch
		if end > len(urls) {
			end = len(urls)
		}
		body, err := json.Marshal(map[string]any{"ua": ua, "urls": urls[start:end]})
		if err != nil {
			return nil, err
		}
		var batch struct {
			Results []json.RawMessage `json:"results"`
		}
		if err := c.do(ctx, http.MethodPost, "/v1/check", body, &batch); err != nil {
			return nil, err
		}
		for _, raw := range batch.Results {
			var item struct {
				Error *Problem `json:"error"`
			}
			if err := json.Unmarshal(raw, &item); err != nil {
				return nil, err
			}
			if item.Error != nil {
				results = append(results, Result{Problem: item.Error})
				continue
			}
			var answer Answer
			if err := json.Unmarshal(raw, &answer); err != nil {
				return nil, err
			}
			results = append(results, Result{Answer: &answer})
		}
	}
	return results, nil
}

func (c *Client) do(ctx context.Context, method, path string, body []byte, out any) error {
	var reader io.Reader
	if body != nil {
		reader = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.BaseURL+path, reader)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	client := c.HTTPClient
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	// Answers are small; a batch of 1,000 is under a megabyte.
	data, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		problem := &Problem{Status: resp.StatusCode, Title: resp.Status}
		if json.Unmarshal(data, problem) != nil || problem.Type == "" {
			problem.Detail = strings.TrimSpace(string(data))
		}
		return problem
	}
	return json.Unmarshal(data, out)
}

// IsProblem reports whether err is a Problem robotsd answered with, and returns it.
func IsProblem(err error) (*Problem, bool) {
	var problem *Problem
	ok := errors.As(err, &problem)
	return problem, ok
}
