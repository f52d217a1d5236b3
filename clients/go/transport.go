package robotsd

import (
	"fmt"
	"net/http"
)

// Transport is an http.RoundTripper that asks robotsd before every request and refuses the
// ones robots.txt disallows, with a *DisallowedError. Any Go crawler takes it; Colly takes it
// through c.WithTransport(&robotsd.Transport{...}).
type Transport struct {
	// Client asks robotsd.
	Client *Client
	// Base makes the requests robotsd allows; http.DefaultTransport when nil.
	Base http.RoundTripper
	// UserAgent is what to check as; when empty, each request's User-Agent header is used.
	UserAgent string
	// FailOpen lets requests through when robotsd cannot answer. By default (false) they fail
	// with an *UnavailableError: a crawler never fetches what it could not check.
	FailOpen bool
	// OnAnswer, when set, sees every answer before the request goes out (its CrawlDelay,
	// Usage, ...).
	OnAnswer func(*http.Request, *Answer)
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

// UnavailableError is the error of a request robotsd could not check, with FailOpen unset.
type UnavailableError struct {
	URL string
	Err error
}

func (e *UnavailableError) Error() string {
	return fmt.Sprintf("robotsd: could not check %s: %v", e.URL, e.Err)
}

func (e *UnavailableError) Unwrap() error { return e.Err }

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
	target := req.URL.String()
	answer, err := t.Client.Check(req.Context(), target, ua)
	if err != nil {
		if t.FailOpen {
			return base.RoundTrip(req)
		}
		return nil, &UnavailableError{URL: target, Err: err}
	}
	if t.OnAnswer != nil {
		t.OnAnswer(req, answer)
	}
	if !answer.Allowed {
		return nil, &DisallowedError{URL: target, Answer: answer}
	}
	return base.RoundTrip(req)
}
