package robotsd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"time"
)

// DefaultMaxPaceWait is how long a Transport waits in all for a slot robotsd defers, unless its
// MaxPaceWait says otherwise: robotsd's longest Retry-After by default (--max-retry-after).
const DefaultMaxPaceWait = 10 * time.Minute

// Transport is an http.RoundTripper that asks robotsd before every request, refuses the ones
// robots.txt disallows with a *DisallowedError, and paces the others. Any Go crawler takes it;
// Colly takes it through c.WithTransport(&robotsd.Transport{...}).
//
// Pacing is on by default: right before each request the Transport reserves a fetch slot with
// the check (Client.CheckPaced), so that the whole fleet asking one robotsd keeps each site's
// crawl-delay together (robotsd's --default-crawl-delay, 1 s, where robots.txt states none), and
// waits for it; the wait honours the request's context. After the response it reports a 429 or
// 503 (with its Retry-After), any other 5xx, a timeout, and a connection refused or reset to
// robotsd (Client.Feedback), in the background, so that the fleet slows down for that site. A
// timeout is the base transport's own (dial, TLS, ResponseHeaderTimeout: they start after the
// wait), or the request's deadline when the wait for the slot took at most a tenth of the time it
// had (the deadline counts the wait: give the fetch its own limit with the base transport's
// timeouts, and allow for the wait in http.Client.Timeout). It reports every other answer too,
// batched, with the time the site took to answer (Report.ResponseMS): successes ease a slowdown,
// and a site answering much slower than its baseline slows the fleet down. The Transport's next request to that origin takes
// its slot once the pushback has been reported, and a Retry-After holds its own requests back
// even if the report is lost. A report that fails is dropped: it never fails a request.
//
// With NoPacing, the Transport checks without reserving and keeps the crawl-delay of each answer
// itself, for its own requests: two requests to one origin start at least the crawl-delay and
// LocalPaceGuard apart, so that the site sees at least the crawl-delay between them.
//
// With Sign, every request goes out signed for the fleet (Web Bot Auth) by robotsd, or not at
// all.
//
// A Transport must not be copied after first use.
type Transport struct {
	// Client asks robotsd.
	Client *Client
	// Base makes the requests robotsd allows; http.DefaultTransport when nil.
	Base http.RoundTripper
	// UserAgent is what to check as; when empty, each request's User-Agent header is used.
	UserAgent string
	// FailOpen lets requests through when robotsd cannot answer (after the Client's retries of
	// robotsd's own 503s), at once: unchecked, unpaced (no slot, no crawl-delay kept) and
	// unsigned. By default (false) they fail with an *UnavailableError: a crawler never fetches
	// what it could not check.
	FailOpen bool
	// OnAnswer, when set, sees every answer before the request goes out (its CrawlDelay,
	// Pace, Usage, ...), a deferred slot's answer too.
	OnAnswer func(*http.Request, *Answer)
	// NoPacing turns fleet pacing off: the checks reserve no slot and nothing is reported to
	// robotsd (for a robotsd older than pacing, or a crawler that paces itself). The Transport
	// then keeps each answer's crawl-delay per origin for its own requests (capped at 60 s,
	// robotsd's default --max-crawl-delay); where robots.txt states none, it does not wait.
	NoPacing bool
	// MaxPaceWait bounds how long a request waits in all on slots robotsd defers (further ahead
	// than its --max-pace-wait); beyond it, or beyond the request's deadline, the request fails
	// with a *DeferredError, for the crawler to requeue the URL. Zero is DefaultMaxPaceWait. A
	// reserved slot is always waited for (it is the request's), within the request's context.
	MaxPaceWait time.Duration
	// Sign has robotsd sign every request for the fleet (Web Bot Auth, robotsd's
	// docs/bot-auth.md; robotsd runs with --wba-keys): each check asks for a signature of the
	// request's method (CheckPacedSigned; CheckSigned with NoPacing), and the request goes out
	// to the URL robotsd signed, the one robotsd parsed (dot segments resolved, a default port
	// dropped, ...), with the three headers it made (Signature-Agent, Signature-Input,
	// Signature), replacing any of those names. A method other than GET or HEAD (robotsd signs
	// no other) and an allowed answer without a signature fail with an *UnsignedError, before
	// anything is sent. A problem robotsd answers with a 4xx status (signing-off: it holds no
	// keys; sign-other-agent: the agent does not name its --wba-product-token) fails the request
	// with an *UnavailableError holding the *Problem, FailOpen or not: it is the crawler's
	// configuration, and FailOpen would send the request unsigned. FailOpen still lets a request
	// through, unsigned, when robotsd cannot answer at all. http.Client calls RoundTrip for each
	// redirect, so each hop is checked and signed for itself. A disallowed URL is never signed,
	// and a request for /robots.txt, which goes through unasked, is not either.
	Sign bool

	local   localPacer
	reports reporter
}

// DisallowedError is the error of a request robots.txt disallows.
type DisallowedError struct {
	URL    string
	Answer *Answer
}

func (e *DisallowedError) Error() string {
	if rule := e.Answer.Rule; rule != nil {
		return fmt.Sprintf("robotsd: %s is disallowed by robots.txt line %d (%s: %s)",
			e.URL, rule.Line, rule.Directive, rule.Pattern)
	}
	return fmt.Sprintf("robotsd: %s is disallowed (%s)", e.URL, e.Answer.Reason)
}

// UnavailableError is the error of a request robotsd could not check, with FailOpen unset: it
// could not be reached, or it answered a *Problem (IsProblem finds it in Err). With Sign, a
// problem with a 4xx status is this error whatever FailOpen says.
type UnavailableError struct {
	URL string
	Err error
}

func (e *UnavailableError) Error() string {
	return fmt.Sprintf("robotsd: could not check %s: %v", e.URL, e.Err)
}

func (e *UnavailableError) Unwrap() error { return e.Err }

// UnsignedError is the error of a request that Transport.Sign would have had to send unsigned:
// its method is not GET or HEAD (robotsd signs no other), or robotsd allowed it without a
// signature. Nothing was sent.
type UnsignedError struct {
	URL    string
	Method string
	// Answer is robotsd's answer, nil when the method was refused before asking.
	Answer *Answer
	// Reason says why.
	Reason string
}

func (e *UnsignedError) Error() string {
	return fmt.Sprintf("robotsd: %s %s was not sent: %s", e.Method, e.URL, e.Reason)
}

// DeferredError is the error of a request whose fetch slot robotsd deferred for longer than
// the Transport's MaxPaceWait or the request's deadline allow: nothing was reserved and
// nothing fetched. Answer.Pace.NotBefore says when to ask again; requeue the URL.
type DeferredError struct {
	URL    string
	Answer *Answer
}

func (e *DeferredError) Error() string {
	return fmt.Sprintf("robotsd: no fetch slot for %s soon enough: ask again at %s",
		e.URL, e.Answer.Pace.NotBefore)
}

// RoundTrip implements http.RoundTripper.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	base := t.Base
	if base == nil {
		base = http.DefaultTransport
	}
	// robots.txt itself is always allowed (RFC 9309 §2.5), and robotsd fetches it anyway.
	if req.URL.Path == "/robots.txt" {
		return base.RoundTrip(req)
	}
	ua := t.UserAgent
	if ua == "" {
		ua = req.Header.Get("User-Agent")
	}
	if ua == "" {
		ua = "Go-http-client"
	}
	entered := time.Now()
	target := req.URL.String()
	origin := originKey(req)
	// The method to have the request signed for; empty: not signed.
	var sign string
	if t.Sign {
		sign = req.Method
		if sign == "" {
			sign = http.MethodGet
		}
		if sign != http.MethodGet && sign != http.MethodHead {
			closeBody(req)
			return nil, &UnsignedError{URL: target, Method: sign, Reason: "robotsd signs only GET and HEAD requests"}
		}
	}
	var answer *Answer
	var err error
	if t.NoPacing {
		answer, err = t.checkAndKeepDelay(req, target, origin, ua, sign)
	} else {
		answer, err = t.reserve(req, target, origin, ua, sign)
	}
	out := req
	if err == nil && sign != "" && answer != nil {
		out, err = signedRequest(req, target, sign, answer)
	}
	if err != nil {
		closeBody(req)
		return nil, err
	}
	sent := time.Now()
	resp, err := base.RoundTrip(out)
	if answer != nil && answer.Pace != nil {
		t.report(req, target, origin, resp, err, sent.Sub(entered), time.Since(sent))
	}
	return resp, err
}

// A RoundTripper closes the request's body, whatever happens.
func closeBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}

// unanswered is what a check that failed with err leads to: FailOpen lets the request through
// (a nil answer and error), else it fails with an *UnavailableError. With Sign, a problem
// robotsd answered with a 4xx status (no keys, an agent its --wba-product-token does not name,
// a wrong Token) is the crawler's configuration rather than robotsd being unavailable, and
// letting the request through would send it unsigned: it fails, FailOpen or not.
func (t *Transport) unanswered(target string, err error) (*Answer, error) {
	problem, isProblem := IsProblem(err)
	configuration := t.Sign && isProblem && problem.Status >= 400 && problem.Status <= 499
	if t.FailOpen && !configuration {
		return nil, nil
	}
	return nil, &UnavailableError{URL: target, Err: err}
}

// checkAndKeepDelay checks without pacing and waits out the answer's crawl-delay since this
// Transport's last request to the origin. A nil answer and error: FailOpen lets it through.
// sign, when not empty, is the method to have the request signed for.
func (t *Transport) checkAndKeepDelay(req *http.Request, target, origin, ua, sign string) (*Answer, error) {
	asked := time.Now()
	answer, err := t.check(req, target, ua, sign)
	if answer == nil || err != nil {
		return answer, err
	}
	if err := t.local.wait(req.Context(), origin, crawlDelay(answer)); err != nil {
		return nil, err
	}
	if answer.Sign != nil && signatureRunsOut(answer.Sign, time.Since(asked)) {
		// The wait outlasted the signature (this Transport's requests to one origin queue up a
		// crawl-delay apart): sign again, without waiting again, the start being this request's.
		return t.check(req, target, ua, sign)
	}
	return answer, nil
}

// check checks without pacing, signing for sign when it is not empty. A nil answer and error:
// FailOpen lets the request through.
func (t *Transport) check(req *http.Request, target, ua, sign string) (*Answer, error) {
	var answer *Answer
	var err error
	if sign != "" {
		answer, err = t.Client.CheckSigned(req.Context(), sign, target, ua)
	} else {
		answer, err = t.Client.Check(req.Context(), target, ua)
	}
	if err != nil {
		return t.unanswered(target, err)
	}
	if t.OnAnswer != nil {
		t.OnAnswer(req, answer)
	}
	if !answer.Allowed {
		return nil, &DisallowedError{URL: target, Answer: answer}
	}
	return answer, nil
}

// signLeeway is the most life a signature must have left when its request goes out (a quarter
// of its life when that is less): time for the request to reach the site, whose clock may differ
// a little from robotsd's.
const signLeeway = 5 * time.Second

// signatureRunsOut reports whether signed, asked for elapsed ago, has too little life left to
// send with: its life is from Created to Expires, both on robotsd's clock, so that the local
// clock need not agree with it. A signature whose times do not parse is sent as it is: the site
// judges.
func signatureRunsOut(signed *Signed, elapsed time.Duration) bool {
	created, err := time.Parse(time.RFC3339, signed.Created)
	if err != nil {
		return false
	}
	expires, err := time.Parse(time.RFC3339, signed.Expires)
	if err != nil {
		return false
	}
	life := expires.Sub(created)
	leeway := life / 4
	if leeway > signLeeway {
		leeway = signLeeway
	}
	return elapsed > life-leeway
}

// signedRequest is req as robotsd signed it for method: a copy (a RoundTripper leaves its request
// alone) to the URL robotsd signed, with the signature's headers. That URL is the one robotsd
// parsed (WHATWG's parser), so it may differ from req.URL: dot segments resolved, a default
// port dropped, an IDN host in ASCII, more percent-encoding. The signature covers its authority,
// path and query, so the request goes there, with its Host: a Host set on req is not sent.
func signedRequest(req *http.Request, target, method string, answer *Answer) (*http.Request, error) {
	signed := answer.Sign
	if signed == nil {
		return nil, &UnsignedError{URL: target, Method: method, Answer: answer, Reason: "robotsd allowed it without a signature"}
	}
	if signed.Method != method {
		return nil, &UnsignedError{URL: target, Method: method, Answer: answer,
			Reason: fmt.Sprintf("robotsd signed a %s request", signed.Method)}
	}
	// Go sends a URL's path as it escapes it; one it would escape otherwise than robotsd wrote it
	// would not verify. A URL the Transport was given comes back escaped as Go escapes it.
	signedURL, err := url.Parse(signed.URL)
	if err != nil || signedURL.RequestURI() != requestTarget(signed.URL) {
		return nil, &UnsignedError{URL: target, Method: method, Answer: answer,
			Reason: fmt.Sprintf("robotsd signed %s, which Go would not send as it is written", signed.URL)}
	}
	out := req.Clone(req.Context())
	out.URL = signedURL
	out.Host = ""
	if out.Header == nil {
		out.Header = http.Header{}
	}
	for name, value := range signed.Headers {
		out.Header.Set(name, value)
	}
	return out, nil
}

// requestTarget is the path and query of an absolute URL as written: all after its authority
// ("/" for an empty path, as Go sends it).
func requestTarget(rawURL string) string {
	rest := rawURL
	if i := strings.Index(rest, "://"); i >= 0 {
		rest = rest[i+len("://"):]
	}
	i := strings.IndexAny(rest, "/?")
	if i < 0 {
		return "/"
	}
	if rest[i] == '?' {
		return "/" + rest[i:]
	}
	return rest[i:]
}

// SlotLateness is the most a paced request may start late for its slot, whatever the interval:
// see slotLateness.
const SlotLateness = 25 * time.Millisecond

// slotLateness is how late a request may start after a slot of interval: a twentieth of the
// interval, at least 5 ms (timers fire a little late as a matter of course, and a site that asks
// for 10 ms between fetches does not mind 5) and at most SlotLateness. A Transport that wakes up later gives the slot up and asks
// for another: robotsd hands the next slot, perhaps another worker's, one interval after this
// one, so a fetch that starts late would shorten that gap as the site sees it. With this bound
// the site sees at least 95% of an interval of 100 ms or more.
func slotLateness(interval time.Duration) time.Duration {
	late := interval / 20
	if late < 5*time.Millisecond {
		late = 5 * time.Millisecond
	}
	if late > SlotLateness {
		late = SlotLateness
	}
	return late
}

// The shortest wait before asking again about a deferred slot.
const minDeferredWait = 10 * time.Millisecond

// MaxAskAgainJitter is the most jitter askAgainDelay adds to a deferred slot's wait.
const MaxAskAgainJitter = time.Second

// askAgainDelay is how long to wait before asking again for a slot robotsd deferred by wait
// (or before sending again a call robotsd answered with its own 503 and a Retry-After of wait):
// that, and a random jitter (random() in [0, 1)) of up to a tenth of it, at most
// MaxAskAgainJitter, so that the workers robotsd told the same time do not all come back at
// once.
func askAgainDelay(wait time.Duration, random func() float64) time.Duration {
	if wait <= 0 {
		return 0
	}
	jitter := wait / 10
	if jitter > MaxAskAgainJitter {
		jitter = MaxAskAgainJitter
	}
	return wait + time.Duration(random()*float64(jitter))
}

// reserve reserves the request's fetch slot and waits for it, asking again while robotsd
// defers it. A nil answer and error: robotsd could not answer and FailOpen lets it through.
// sign, when not empty, is the method to have the request signed for: a reserved slot's
// signature lasts from the slot's start.
func (t *Transport) reserve(req *http.Request, target, origin, ua, sign string) (*Answer, error) {
	ctx := req.Context()
	// A pushback this Transport saw from the origin is reported before the next slot is taken.
	if err := t.reports.settled(ctx, origin); err != nil {
		return nil, err
	}
	limit := t.MaxPaceWait
	if limit <= 0 {
		limit = DefaultMaxPaceWait
	}
	giveUp := time.Now().Add(limit)
	if deadline, ok := ctx.Deadline(); ok && deadline.Before(giveUp) {
		giveUp = deadline
	}
	for {
		var answer *Answer
		var err error
		if sign != "" {
			answer, err = t.Client.CheckPacedSigned(ctx, sign, target, ua)
		} else {
			answer, err = t.Client.CheckPaced(ctx, target, ua)
		}
		if err != nil {
			return t.unanswered(target, err)
		}
		if t.OnAnswer != nil {
			t.OnAnswer(req, answer)
		}
		if !answer.Allowed {
			return nil, &DisallowedError{URL: target, Answer: answer}
		}
		pace := answer.Pace
		if pace == nil {
			// An allowed URL always has a slot; should a robotsd not give one, keep the
			// crawl-delay here.
			return answer, t.local.wait(ctx, origin, crawlDelay(answer))
		}
		wait := pace.Wait()
		if pace.Reserved() {
			at := time.Now().Add(wait)
			// A Retry-After this Transport was answered holds its own requests back even if
			// robotsd did not hear of it (and robotsd keeps its end to the millisecond only):
			// past the slot, which is then given up unless that is within the lateness allowed.
			if held := t.local.heldFor(origin, time.Now()); held > wait {
				wait = held
			}
			if time.Now().Add(wait).After(giveUp) {
				return nil, &DeferredError{URL: target, Answer: answer}
			}
			if err := sleep(ctx, wait); err != nil {
				return nil, err
			}
			if time.Since(at) <= slotLateness(time.Duration(pace.IntervalMS)*time.Millisecond) {
				return answer, nil
			}
			// Woken late: the next slot, perhaps another worker's, is one interval after this
			// one, and a late fetch would shorten that gap at the site.
			continue
		}
		if wait < minDeferredWait {
			wait = minDeferredWait
		}
		// With a jitter, so that the workers told the same not_before do not all ask at once.
		wait = askAgainDelay(wait, rand.Float64)
		if time.Now().Add(wait).After(giveUp) {
			return nil, &DeferredError{URL: target, Answer: answer}
		}
		if err := sleep(ctx, wait); err != nil {
			return nil, err
		}
	}
}

// report tells robotsd, in the background, what the site answered a paced request: a 429, any
// 5xx, a timeout, or a connection refused or reset; and every other answer with the time the
// site took to answer it (to the response's header, as RoundTrip returns it), from which robotsd
// keeps the site's baseline and slows the fleet when the site slows down. waited is how long the
// request waited for its slot (within the caller's time limit), ran how long the fetch itself
// ran.
func (t *Transport) report(req *http.Request, target, origin string, resp *http.Response, err error, waited, ran time.Duration) {
	switch {
	case err != nil:
		switch failureOf(req.Context(), err, waited, ran) {
		case failureTimeout:
			t.reports.add(t.Client, origin, Report{URL: target, Timeout: true}, true)
		case failureRefused:
			t.reports.add(t.Client, origin, Report{URL: target, Connection: ConnectionRefused}, true)
		case failureReset:
			t.reports.add(t.Client, origin, Report{URL: target, Connection: ConnectionReset}, true)
		}
	case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable:
		retryAfter := strings.TrimSpace(resp.Header.Get("Retry-After"))
		t.local.hold(origin, retryAfter, time.Now())
		if len(retryAfter) > maxRetryAfterBytes {
			// robotsd refuses the whole report for it; without it, it is still a pushback.
			retryAfter = ""
		}
		t.reports.add(t.Client, origin, Report{URL: target, Status: resp.StatusCode, RetryAfter: retryAfter}, true)
	case resp.StatusCode >= 500 && resp.StatusCode <= 599:
		t.reports.add(t.Client, origin, Report{URL: target, Status: resp.StatusCode}, true)
	case resp.StatusCode >= 100 && resp.StatusCode <= 599:
		t.reports.add(t.Client, origin, Report{URL: target, Status: resp.StatusCode, ResponseMS: responseMS(ran)}, false)
	}
}

// responseMS is a response time as a report carries it: whole milliseconds, rounded up, so
// that a fast answer is still a sample (zero is "not said"), and within the bound robotsd takes.
func responseMS(ran time.Duration) int64 {
	ms := (ran + time.Millisecond - 1) / time.Millisecond
	if ms < 1 {
		return 1
	}
	if ms > maxResponseMS {
		return maxResponseMS
	}
	return int64(ms)
}

// The longest response time robotsd takes in a report (ten minutes).
const maxResponseMS = 600_000

// The longest Retry-After value robotsd takes in a report.
const maxRetryAfterBytes = 256

// How a fetch got no answer from the site, as robotsd is told; failureNone: not the site's doing.
type failure int

const (
	failureNone failure = iota
	failureTimeout
	failureRefused
	failureReset
)

// failureOf tells how a fetch that waited waited for its slot and ran for ran failed:
//   - refused or reset: the connection was refused, or reset (or closed) before any answer;
//   - a timeout: one of the base transport's own (dial, TLS handshake, response header), which
//     start once the request goes, after the wait; or the request's deadline (its context's, or
//     http.Client.Timeout's, which ends a custom RoundTripper's request with "request canceled"
//     as often as with the deadline's error) when the wait for the slot took at most a tenth of
//     the time it had: that deadline counts the wait, and a fetch that it left less time says
//     nothing of the site (reporting it would slow the fleet down, lengthen the waits, and leave
//     the next fetches less time still);
//   - nothing for a cancellation or any other error (a name that does not resolve, TLS).
func failureOf(ctx context.Context, err error, waited, ran time.Duration) failure {
	if errors.Is(err, context.Canceled) {
		return failureNone
	}
	if errors.Is(err, syscall.ECONNREFUSED) {
		return failureRefused
	}
	if errors.Is(err, syscall.ECONNRESET) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return failureReset
	}
	if deadline, ok := ctx.Deadline(); ok && !time.Now().Before(deadline) {
		if waited <= (waited+ran)/10 {
			return failureTimeout
		}
		return failureNone
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return failureTimeout
	}
	var netErr net.Error
	if errors.As(err, &netErr) && netErr.Timeout() {
		return failureTimeout
	}
	return failureNone
}

// crawlDelay is an answer's crawl-delay as a duration (zero when there is none).
func crawlDelay(answer *Answer) time.Duration {
	if answer.CrawlDelay == nil || *answer.CrawlDelay <= 0 {
		return 0
	}
	seconds := *answer.CrawlDelay
	if seconds > maxLocalDelay.Seconds() {
		return maxLocalDelay
	}
	return time.Duration(seconds * float64(time.Second))
}
