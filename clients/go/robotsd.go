// Package robotsd is a client for robotsd, robots.txt as a service: may this user agent fetch
// this URL, and why. It uses the standard library only.
//
// A Client answers single and batch checks over one pooled connection set, reserves fetch slots
// that keep a site's crawl-delay for a whole fleet (CheckPaced), and reports what the sites
// answered (Feedback). A Transport wraps any http.RoundTripper so that every request a crawler
// makes is checked and paced first, and a disallowed one fails with a *DisallowedError carrying
// the reason and the rule's line.
package robotsd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// MaxBatch is the most URLs robotsd answers in one batch; CheckMany splits longer lists.
const MaxBatch = 1000

// DefaultMaxRetries is how many times a call robotsd answered with a 503 of its own is sent
// again, unless Client.MaxRetries says otherwise.
const DefaultMaxRetries = 2

// MaxRetryWait is the longest Retry-After of robotsd's that a retry waits; without one, it
// waits a second.
const MaxRetryWait = 60 * time.Second

// problemTypePrefix begins the type of every problem robotsd answers with. A 503 whose problem
// is not one of them (a proxy's or a load balancer's page) is never retried: it says nothing of
// what became of the request, nor when to ask again.
const problemTypePrefix = "urn:robotsd:problem:"

// Client asks one robotsd service. It is safe for concurrent use.
//
// Each call is one request to robotsd (a batch, one per MaxBatch items), and its retries: a 503
// of robotsd's own (a problem+json answer of an urn:robotsd:problem: type: overloaded,
// bodies-in-flight, connection-limit, cache-full; robotsd did nothing with the request) is sent
// again up to MaxRetries times, after its Retry-After and a jitter, as long as the wait ends
// within the call's time limit (the context's deadline, and HTTPClient.Timeout from the call's
// start); then its *Problem is returned. Nothing else is retried.
type Client struct {
	// BaseURL is robotsd's address, such as "http://127.0.0.1:8080".
	BaseURL string
	// HTTPClient carries the requests; New gives one with a connection pool, a 5 s connect
	// timeout and a 30 s timeout (robotsd answers within its own 30 s request limit).
	HTTPClient *http.Client
	// Token is sent as a bearer token when robotsd runs with --api-token-file.
	Token string
	// MaxRetries is how many times a call robotsd answered with a 503 of its own is sent
	// again. Zero is DefaultMaxRetries; a negative value never retries.
	MaxRetries int
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
	// Truncated is true when Pattern was cut to the answer's bound (2,048 bytes of JSON).
	Truncated bool `json:"truncated,omitempty"`
}

// Group is the groups of robots.txt that applied, merged: their first 16 user-agent lines.
type Group struct {
	Agents []string `json:"agents"`
	Lines  []int    `json:"lines"`
	Global bool     `json:"global"`
	// AgentsTotal counts the groups' user-agent lines when Agents shows fewer (0 otherwise).
	AgentsTotal int `json:"agents_total,omitempty"`
	// Truncated is true when Agents was cut to the answer's bounds.
	Truncated bool `json:"truncated,omitempty"`
}

// Agent is the user agents asked about, and the product token robotsd used for each.
type Agent struct {
	// Input is the values as given, a comma list's names apart: the first 8, each cut at 256
	// bytes of JSON.
	Input []string `json:"input"`
	// Tokens is the product token used for each (parallel to Input).
	Tokens []string `json:"tokens"`
	// InputTotal counts the agents asked about when Input shows fewer (0 otherwise).
	InputTotal int `json:"input_total,omitempty"`
	// Truncated is true when Input or Tokens was cut to the answer's bounds.
	Truncated bool `json:"truncated,omitempty"`
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
	// RSL is present only when robotsd runs with --rsl and the robots.txt names a license.
	RSL []RSLTerms `json:"rsl,omitempty"`
	// RSLTotal counts the distinct license URLs when RSL reports fewer (it reports 4; 0
	// otherwise).
	RSLTotal int `json:"rsl_total,omitempty"`
	// ContentUsageTotal and ContentSignalTotal count a vocabulary's categories when its map
	// shows fewer (16 at most; 0 otherwise).
	ContentUsageTotal  int `json:"content_usage_total,omitempty"`
	ContentSignalTotal int `json:"content_signal_total,omitempty"`
	// Truncated is true when a list here was cut to the answer's bounds.
	Truncated bool `json:"truncated,omitempty"`
}

// RSLTerms is what one License: line of the robots.txt gives the URL: the terms of the
// <content> elements of its RSL 1.0 document that cover the URL (State "covered"), or why there
// are none: "not_covered", "fetch_failed", "invalid", "refused" or "not_fetched".
type RSLTerms struct {
	LicenseURL string       `json:"license_url"`
	Line       int          `json:"line"`
	State      string       `json:"state"`
	Reason     *string      `json:"reason"`
	Contents   []RSLContent `json:"contents"`
	// ContentsTotal counts the covering <content> elements when Contents shows fewer (0
	// otherwise).
	ContentsTotal int `json:"contents_total,omitempty"`
	// Truncated is true when this report was cut to the answer's bounds.
	Truncated bool       `json:"truncated,omitempty"`
	Source    *RSLSource `json:"source"`
}

// RSLContent is a <content> element: its url pattern, its license server (when set, a license
// must be obtained from it before use, even a free one) and the licenses it offers.
type RSLContent struct {
	URL       string       `json:"url"`
	Line      int          `json:"line"`
	Server    *string      `json:"server"`
	Encrypted bool         `json:"encrypted"`
	Lastmod   *string      `json:"lastmod"`
	Licenses  []RSLLicense `json:"licenses"`
}

// RSLLicense is one <license>: what it permits and prohibits, and its payment (nil: free).
type RSLLicense struct {
	Permits   RSLScope    `json:"permits"`
	Prohibits RSLScope    `json:"prohibits"`
	Payment   *RSLPayment `json:"payment"`
}

// RSLScope lists the values of <permits> or <prohibits> elements by type.
type RSLScope struct {
	Usage []string `json:"usage"`
	User  []string `json:"user"`
	Geo   []string `json:"geo"`
}

// RSLPayment is a <payment>: its type as written (nil when the element has none).
type RSLPayment struct {
	Type     *string     `json:"type"`
	Amounts  []RSLAmount `json:"amounts"`
	Standard *string     `json:"standard"`
	Custom   *string     `json:"custom"`
}

// RSLAmount is an <amount> and its ISO 4217 currency.
type RSLAmount struct {
	Value    string  `json:"value"`
	Currency *string `json:"currency"`
}

// RSLSource is where a license document came from, as Source is for robots.txt.
type RSLSource struct {
	Status    *int        `json:"status"`
	FetchedAt *string     `json:"fetched_at"`
	ExpiresAt *string     `json:"expires_at"`
	SHA256    *string     `json:"sha256"`
	Bytes     *int        `json:"bytes"`
	FinalURL  *string     `json:"final_url"`
	Cache     string      `json:"cache"`
	Backoff   *RSLBackoff `json:"backoff"`
}

// RSLBackoff is a run of failures to fetch a license document.
type RSLBackoff struct {
	Since     string `json:"since"`
	Failures  int    `json:"failures"`
	NextRetry string `json:"next_retry"`
	LastError string `json:"last_error"`
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
	Status    *int    `json:"status"`
	FetchedAt *string `json:"fetched_at"`
	SHA256    *string `json:"sha256"`
	ExpiresAt *string `json:"expires_at"`
	Bytes     *int    `json:"bytes"`
	FinalURL  *string `json:"final_url"`
	// Challenged is the bot challenge that answered the fetch instead of the site, if one did.
	Challenged *Challenge `json:"challenged,omitempty"`
	Cache      string     `json:"cache"`
	Backoff    *Backoff   `json:"backoff"`
}

// Challenge is a bot challenge (a firewall asking for a browser) that answered a robots.txt
// fetch: Vendor is cloudflare, aws-waf, datadome, human or imperva; Marker what showed it.
type Challenge struct {
	Vendor string `json:"vendor"`
	Marker string `json:"marker"`
}

// Answer is robotsd's answer to a check. An answer in a batch (CheckMany) past the bound of the
// batch's answer (8 MiB, which a robots.txt made to fill every answer reaches) is the verdict
// alone: only Allowed and Reason (and Pace) are set, as right as a full answer's, and Full
// reports false.
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
	// Pace is the fetch slot reserved for the URL when the check asked for one (CheckPaced,
	// CheckManyPaced); nil without asking, and nil when the URL is disallowed (nothing is
	// reserved).
	Pace *Pace `json:"pace"`
	// Record is, when the check asked for it (CheckRecorded), what robots.txt said of the URL,
	// compact, to store beside the fetched page as it is (format "robotsd-record/1": the URL,
	// the time, the copy's SHA-256, the deciding rule and its preferences for the URL;
	// docs/page.md). Empty otherwise.
	Record json.RawMessage `json:"record,omitempty"`
	// Sign is, when the check asked for a signature (CheckSigned, CheckPacedSigned: sign=GET or
	// HEAD) and the URL is allowed (with pacing, its slot reserved), the Web Bot Auth headers
	// for exactly that request; nil otherwise.
	Sign *Signed `json:"sign,omitempty"`
}

// Signed is a request signed for the fleet (Web Bot Auth): send Method to URL as it is, with
// Headers, before Expires.
type Signed struct {
	Method  string            `json:"method"`
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers"`
	KeyID   string            `json:"keyid"`
	Created string            `json:"created"`
	Expires string            `json:"expires"`
}

// Full reports whether the answer is in full, rather than the verdict alone (Allowed, Reason
// and Pace) that a batch gives past its bound: every full answer has a Verdict.
func (a *Answer) Full() bool {
	return a.Verdict != ""
}

// The outcomes of a reservation (Pace.Outcome).
const (
	// PaceReserved: the slot is this worker's; start the fetch Pace.Wait() after the answer.
	PaceReserved = "reserved"
	// PaceDeferred: the next slot is further ahead than robotsd's --max-pace-wait; nothing was
	// reserved. Ask again Pace.Wait() after the answer, or requeue the URL.
	PaceDeferred = "deferred"
)

// Pace is a fetch slot robotsd reserved for one fetch, kept for the whole fleet: every worker
// that asks with pacing gets slots at least the origin's interval apart.
type Pace struct {
	// Outcome is PaceReserved or PaceDeferred.
	Outcome string `json:"outcome"`
	// Next is what to do at NotBefore: "fetch" (reserved) or "ask_again" (deferred: nothing
	// was reserved, so do not fetch then; ask again).
	Next string `json:"next"`
	// Lane names the fetches that share this pace (robotsd's --pace-key: "host:example.com" by
	// default).
	Lane string `json:"lane"`
	// NotBefore is, reserved, the time the fetch may start; deferred, when to ask again
	// (RFC 3339 with milliseconds, on robotsd's clock: wait WaitMS instead of reading it).
	NotBefore string `json:"not_before"`
	// WaitMS is the milliseconds from the answer until NotBefore.
	WaitMS int64 `json:"wait_ms"`
	// IntervalMS is the interval kept before this slot, after any slowdown.
	IntervalMS int64 `json:"interval_ms"`
	// IntervalSource is "crawl_delay" (the group's line), "default" (robotsd's
	// --default-crawl-delay: the group states none) or "pushback" (the site pushed back).
	IntervalSource string `json:"interval_source"`
	// CrawlDelayLine is the line of the group's crawl-delay, nil when it has none.
	CrawlDelayLine *int `json:"crawl_delay_line"`
	// Capped says the crawl-delay was above robotsd's --max-crawl-delay and was capped.
	Capped bool `json:"capped"`
	// Slowdown is the origin's slowdown factor: 1 unless the site pushed back.
	Slowdown float64 `json:"slowdown"`
	// RetryAfterUntil is the end of a Retry-After the site asked for, while it lasts.
	RetryAfterUntil *string `json:"retry_after_until"`
	// Scope is "fleet" (decided by robotsd's shared store) or "local" (this robotsd alone,
	// at 1/FleetSize of the site's rate).
	Scope string `json:"scope"`
	// FleetSize is how many replicas robotsd counts itself among when it decides alone
	// (robotsd's --fleet-size; 0 from a robotsd older than the flag).
	FleetSize int `json:"fleet_size"`
	// FleetIndex is its place among them (--fleet-index), nil when not set.
	FleetIndex *int `json:"fleet_index"`
}

// Reserved reports whether the slot was reserved (rather than deferred).
func (p *Pace) Reserved() bool { return p.Outcome == PaceReserved }

// Wait is how long to wait from the answer: until the fetch may start, or, deferred, until
// asking again.
func (p *Pace) Wait() time.Duration { return time.Duration(p.WaitMS) * time.Millisecond }

// PaceState is an origin's pacing state, as a report left it (Feedback) or as robotsd holds it
// (Robots).
type PaceState struct {
	// Lane is the pace's lane, as Pace.Lane names it.
	Lane string `json:"lane"`
	// Slowdown is the slowdown factor now: 1 unless the site pushed back (each pushback doubles
	// it; it decays back by itself).
	Slowdown float64 `json:"slowdown"`
	// RetryAfterUntil is the end of a Retry-After the site asked for, while it lasts.
	RetryAfterUntil *string `json:"retry_after_until"`
	// LastSlot is the last slot handed out, if any.
	LastSlot *string `json:"last_slot"`
	// Scope is "fleet" or "local": where the state was read.
	Scope string `json:"scope"`
}

// Report is what a site answered a worker for one page, for Feedback: a Status (with the
// Retry-After header as received, if any), Timeout, or Connection. A 429 or 503 (Retry-After
// honoured), any other 5xx, a timeout, or a connection refused or reset slows the origin down for
// the whole fleet; other statuses ease a slowdown.
type Report struct {
	URL string `json:"url"`
	// Status is the HTTP status the site answered; zero (left out) with Timeout.
	Status int `json:"status,omitempty"`
	// RetryAfter is the Retry-After header's value as received (seconds or an HTTP date).
	RetryAfter string `json:"retry_after,omitempty"`
	// Timeout says the site did not answer within the fetch's own time limit, the wait for the
	// slot not counted (instead of a Status).
	Timeout bool `json:"timeout,omitempty"`
	// Connection is ConnectionRefused or ConnectionReset when the connection to the site failed
	// before any answer (instead of a Status or Timeout): a pushback, as a timeout is.
	Connection string `json:"connection,omitempty"`
	// ResponseMS is how long the site took to answer, in milliseconds, measured the same way
	// for every page (0: not said). A site answering much slower than its recent baseline
	// slows the whole fleet (robotsd's docs/politeness.md).
	ResponseMS int64 `json:"response_ms,omitempty"`
}

// The values of Report.Connection.
const (
	ConnectionRefused = "refused"
	ConnectionReset   = "reset"
)

// FeedbackRequest is the body of POST /v1/feedback.
type FeedbackRequest struct {
	Reports []Report `json:"reports"`
}

// FeedbackResult is one report's effect: the origin and its pacing state after the report, or
// the Problem with that report (the others are taken).
type FeedbackResult struct {
	Origin string `json:"origin"`
	// Applied is false when robotsd holds nothing of the origin (nobody checked it): the report
	// changed nothing.
	Applied bool       `json:"applied"`
	Pace    *PaceState `json:"pace"`
	Problem *Problem   `json:"error"`
}

// FeedbackResponse is robotsd's answer to POST /v1/feedback: one result per report, in order.
type FeedbackResponse struct {
	Results []FeedbackResult `json:"results"`
}

// Robots is what robotsd holds for an origin (GET /v1/robots).
type Robots struct {
	Origin    string `json:"origin"`
	RobotsURL string `json:"robots_url"`
	// State is "parsed", "no_robots_txt", "unreachable" or "refused".
	State  string `json:"state"`
	Robots Source `json:"robots"`
	// Parsed is the parsed file, when there is one.
	Parsed *Parsed `json:"parsed"`
	// RobotsTxt is the file's text as fetched, when asked for and a parsed file is held.
	RobotsTxt *string `json:"robots_txt"`
	// Pace is the origin's pacing state, nil when none is kept.
	Pace *PaceState `json:"pace"`
}

// Parsed is a parsed robots.txt.
type Parsed struct {
	Groups   []GroupDetail `json:"groups"`
	Sitemaps []Sitemap     `json:"sitemaps"`
	// Licenses are the License: lines (RSL 1.0), reported only.
	Licenses    []License    `json:"licenses"`
	Diagnostics []Diagnostic `json:"diagnostics"`
	Lines       int          `json:"lines"`
}

// GroupDetail is one group of a parsed robots.txt.
type GroupDetail struct {
	Agents     []AgentLine `json:"agents"`
	Rules      []Rule      `json:"rules"`
	CrawlDelay *float64    `json:"crawl_delay"`
	Usage      []UsageLine `json:"usage"`
}

// AgentLine is a user-agent line of a group.
type AgentLine struct {
	Value string `json:"value"`
	Line  int    `json:"line"`
}

// UsageLine is a content-usage or content-signal line of a group.
type UsageLine struct {
	// Source is "content-usage" or "content-signal".
	Source    string `json:"source"`
	Line      int    `json:"line"`
	Statement string `json:"statement"`
	// Path is the path it applies to, nil for the whole site.
	Path *string `json:"path"`
	// Preferences are the labels it states and their values.
	Preferences map[string]string `json:"preferences"`
}

// Sitemap is a sitemap line.
type Sitemap struct {
	URL  string `json:"url"`
	Line int    `json:"line"`
}

// License is a License: line (RSL 1.0): the URL of a license document that states on what
// terms the site's content may be used.
type License struct {
	URL  string `json:"url"`
	Line int    `json:"line"`
}

// Diagnostic is what robotsd found on a line of robots.txt.
type Diagnostic struct {
	Line int     `json:"line"`
	Kind string  `json:"kind"`
	Key  *string `json:"key"`
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

// Result is one answer of a batch: an Answer, or the Problem with that item. The Answer is in
// full, or the verdict alone (Answer.Full reports false: only Allowed, Reason and Pace are set)
// once robotsd's answer to the batch reached its bound (8 MiB).
type Result struct {
	Answer  *Answer
	Problem *Problem
}

// Check asks whether the agent(s) may fetch rawURL.
func (c *Client) Check(ctx context.Context, rawURL string, ua ...string) (*Answer, error) {
	return c.check(ctx, rawURL, ua, false, false, "")
}

// CheckRecorded is Check whose answer also carries Answer.Record (GET /v1/check?record=true),
// to store beside the page once it is fetched.
func (c *Client) CheckRecorded(ctx context.Context, rawURL string, ua ...string) (*Answer, error) {
	return c.check(ctx, rawURL, ua, false, true, "")
}

// CheckPaced asks whether the agent(s) may fetch rawURL and, when they may, reserves a fetch
// slot for it that keeps the origin's interval for the whole fleet (GET /v1/check?pace=true):
// Answer.Pace. One reservation is one fetch: reserve right before fetching, then wait
// Pace.Wait(). The Transport does this for every request.
func (c *Client) CheckPaced(ctx context.Context, rawURL string, ua ...string) (*Answer, error) {
	return c.check(ctx, rawURL, ua, true, false, "")
}

// CheckSigned is Check that also has robotsd sign the request when rawURL is allowed
// (GET /v1/check?sign=GET, Web Bot Auth: robotsd's docs/bot-auth.md): Answer.Sign, the headers
// for method (http.MethodGet or http.MethodHead, the only ones robotsd signs) to Answer.Sign.URL
// exactly, to send before Answer.Sign.Expires. A disallowed URL has no Sign. A robotsd without
// keys answers a *Problem (urn:robotsd:problem:signing-off), and so does one whose
// --wba-product-token ua does not name (urn:robotsd:problem:sign-other-agent).
func (c *Client) CheckSigned(ctx context.Context, method, rawURL string, ua ...string) (*Answer, error) {
	return c.check(ctx, rawURL, ua, false, false, method)
}

// CheckPacedSigned is CheckPaced that also signs, as CheckSigned: a reserved slot's signature
// lasts from its Pace.NotBefore; a deferred slot has none (ask again at its NotBefore). The
// Transport does this for every request when its Sign is set.
func (c *Client) CheckPacedSigned(ctx context.Context, method, rawURL string, ua ...string) (*Answer, error) {
	return c.check(ctx, rawURL, ua, true, false, method)
}

// check asks GET /v1/check; sign, when not empty, is the method to sign the request for.
func (c *Client) check(ctx context.Context, rawURL string, ua []string, pace, record bool, sign string) (*Answer, error) {
	query := url.Values{"url": {rawURL}, "ua": ua}
	if pace {
		query.Set("pace", "true")
	}
	if record {
		query.Set("record", "true")
	}
	if sign != "" {
		query.Set("sign", sign)
	}
	var answer Answer
	if err := c.do(ctx, http.MethodGet, "/v1/check?"+query.Encode(), nil, &answer); err != nil {
		return nil, err
	}
	return &answer, nil
}

// CheckMany asks about many URLs for the same agent(s) with POST /v1/check, MaxBatch at a
// time, and returns one Result per URL, in order. Past the bound of a batch's answer (8 MiB:
// robots.txt files made to fill every answer, and long URLs, reach it), robotsd answers each
// further item with the verdict alone: its Answer has only Allowed, Reason (and Pace) set, and
// Answer.Full reports false. Those verdicts are as right as full answers.
func (c *Client) CheckMany(ctx context.Context, ua []string, urls []string) ([]Result, error) {
	return c.checkMany(ctx, ua, urls, false)
}

// CheckManyPaced is CheckMany reserving a fetch slot for each allowed URL
// (POST /v1/check?pace=true): the URLs of one origin get staggered slots, one interval apart,
// each measured from its answer (Answer.Pace.Wait()). A slot further ahead than robotsd's
// --max-pace-wait is deferred, and so are the origin's later URLs in the batch.
func (c *Client) CheckManyPaced(ctx context.Context, ua []string, urls []string) ([]Result, error) {
	return c.checkMany(ctx, ua, urls, true)
}

func (c *Client) checkMany(ctx context.Context, ua []string, urls []string, pace bool) ([]Result, error) {
	path := "/v1/check"
	if pace {
		path += "?pace=true"
	}
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
		if err := c.do(ctx, http.MethodPost, path, body, &batch); err != nil {
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

// Feedback tells robotsd what the sites answered (POST /v1/feedback), MaxBatch reports at a
// time, and returns one FeedbackResult per report, in order. A report robotsd could not take
// (a URL that is not http(s), neither Status nor Timeout, ...) has its Problem; the others are
// taken.
func (c *Client) Feedback(ctx context.Context, reports []Report) ([]FeedbackResult, error) {
	results := make([]FeedbackResult, 0, len(reports))
	for start := 0; start < len(reports); start += MaxBatch {
		end := start + MaxBatch
		if end > len(reports) {
			end = len(reports)
		}
		body, err := json.Marshal(FeedbackRequest{Reports: reports[start:end]})
		if err != nil {
			return nil, err
		}
		var answer FeedbackResponse
		if err := c.do(ctx, http.MethodPost, "/v1/feedback", body, &answer); err != nil {
			return nil, err
		}
		results = append(results, answer.Results...)
	}
	return results, nil
}

// Report tells robotsd what a site answered for one page, and returns the origin's pacing
// state after it; a report robotsd could not take is a *Problem error.
func (c *Client) Report(ctx context.Context, report Report) (*PaceState, error) {
	results, err := c.Feedback(ctx, []Report{report})
	if err != nil {
		return nil, err
	}
	if len(results) != 1 {
		return nil, fmt.Errorf("robotsd: %d feedback results for one report", len(results))
	}
	if results[0].Problem != nil {
		return nil, results[0].Problem
	}
	return results[0].Pace, nil
}

// Robots returns what robotsd holds for rawURL's origin (GET /v1/robots), fetching its
// robots.txt if needed; with includeText, also the file's text (Robots.RobotsTxt).
func (c *Client) Robots(ctx context.Context, rawURL string, includeText bool) (*Robots, error) {
	query := url.Values{"url": {rawURL}}
	if includeText {
		query.Set("include", "robots_txt")
	}
	var robots Robots
	if err := c.do(ctx, http.MethodGet, "/v1/robots?"+query.Encode(), nil, &robots); err != nil {
		return nil, err
	}
	return &robots, nil
}

// do makes one call: the request, and its retries after robotsd's own 503s.
func (c *Client) do(ctx context.Context, method, path string, body []byte, out any) error {
	client := c.HTTPClient
	if client == nil {
		client = http.DefaultClient
	}
	// The end of the call's time limit (zero: none): a retry whose wait ends past it is not
	// made, and the 503 is returned at once.
	var limit time.Time
	if client.Timeout > 0 {
		limit = time.Now().Add(client.Timeout)
	}
	if deadline, ok := ctx.Deadline(); ok && (limit.IsZero() || deadline.Before(limit)) {
		limit = deadline
	}
	for attempt := 0; ; attempt++ {
		resp, data, err := c.send(ctx, client, method, path, body)
		if err != nil {
			return err
		}
		if resp.StatusCode == http.StatusOK {
			return json.Unmarshal(data, out)
		}
		problem := &Problem{Status: resp.StatusCode, Title: resp.Status}
		if json.Unmarshal(data, problem) != nil || problem.Type == "" {
			problem.Detail = strings.TrimSpace(string(data))
		}
		if attempt < c.maxRetries() && robotsdBusy(resp, problem) {
			wait := askAgainDelay(retryAfter(resp.Header.Get("Retry-After"), time.Now()), rand.Float64)
			if limit.IsZero() || time.Now().Add(wait).Before(limit) {
				if err := sleep(ctx, wait); err != nil {
					return err
				}
				continue
			}
		}
		return problem
	}
}

// send sends one request to robotsd, and reads its answer.
func (c *Client) send(ctx context.Context, client *http.Client, method, path string, body []byte) (*http.Response, []byte, error) {
	var reader io.Reader
	if body != nil {
		reader = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.BaseURL+path, reader)
	if err != nil {
		return nil, nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	// Answers are small; a batch of 1,000 is under a megabyte.
	data, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, nil, err
	}
	return resp, data, nil
}

func (c *Client) maxRetries() int {
	if c.MaxRetries == 0 {
		return DefaultMaxRetries
	}
	if c.MaxRetries < 0 {
		return 0
	}
	return c.MaxRetries
}

// robotsdBusy reports whether resp is a 503 of robotsd's own: problem+json of one of its types,
// which robotsd answers having done nothing with the request, with a Retry-After.
func robotsdBusy(resp *http.Response, problem *Problem) bool {
	if resp.StatusCode != http.StatusServiceUnavailable {
		return false
	}
	mediaType, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	return mediaType == "application/problem+json" && strings.HasPrefix(problem.Type, problemTypePrefix)
}

// retryAfter is the wait a Retry-After header asks for (delay-seconds or an HTTP date), read at
// now: a second when it says nothing readable, at most MaxRetryWait.
func retryAfter(value string, now time.Time) time.Duration {
	value = strings.TrimSpace(value)
	wait := time.Second
	if seconds, err := strconv.ParseUint(value, 10, 64); err == nil {
		wait = MaxRetryWait
		if seconds < uint64(MaxRetryWait/time.Second) {
			wait = time.Duration(seconds) * time.Second
		}
	} else if at, err := http.ParseTime(value); err == nil {
		wait = at.Sub(now)
		if wait < 0 {
			wait = 0
		}
	}
	if wait > MaxRetryWait {
		wait = MaxRetryWait
	}
	return wait
}

// IsProblem reports whether err is a Problem robotsd answered with, and returns it.
func IsProblem(err error) (*Problem, bool) {
	var problem *Problem
	ok := errors.As(err, &problem)
	return problem, ok
}
