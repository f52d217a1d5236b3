package robotsd

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sort"
	"strings"
)

// MaxPageDocumentBytes is how much of a document robotsd reads: its first 2 MiB, as Googlebot
// reads HTML. Client.Page sends no more than that.
const MaxPageDocumentBytes = 2 << 20

// pageHeaderNames are the response headers robotsd reads of a page, in the order Client.Page
// sends them (PageHeaders): the robots rules, the AI-use statements (aipref's Content-Usage,
// W3C TDMRep), and the document's charset.
var pageHeaderNames = []string{"Robots-Tag", "X-Robots-Tag", "Content-Usage", "Tdm-Reservation", "Tdm-Policy", "Content-Type"}

// The values of PageRule.Ignored: why a rule that applied to the crawler has no effect.
const (
	// RuleUnknown is not a robots rule (Google ignores unknown rules).
	RuleUnknown = "unknown"
	// RuleUnparseable has a value robotsd cannot read (max-snippet:many, a date it cannot read).
	RuleUnparseable = "unparseable"
)

// The values of ContentUsageHeader.State.
const (
	ContentUsageAbsent      = "absent"
	ContentUsageUnparseable = "unparseable"
	ContentUsageStated      = "stated"
)

// PageRequest is the body of POST /v1/page: a fetched page as the crawler received it.
// Client.Page builds it from an *http.Response; Client.PostPage sends one as given.
type PageRequest struct {
	// URL is the page's URL: the one whose response this is (after redirects).
	URL string `json:"url"`
	// UA is the crawler: product tokens or whole User-Agent headers. Rules written for any of
	// its product tokens apply to it.
	UA []string `json:"ua"`
	// Headers are the response headers, [name, value] in order, repeated ones kept; at most
	// 256, values of at most 16 KiB. Only Robots-Tag, X-Robots-Tag, Content-Usage,
	// Tdm-Reservation, Tdm-Policy and Content-Type are read.
	Headers [][2]string `json:"headers,omitempty"`
	// HTML is the document as text (empty: none).
	HTML string `json:"html,omitempty"`
	// HTMLBase64 is the document's bytes instead (sent as base64; empty: none), read in its
	// own charset: byte order mark, Content-Type's charset, a meta charset, else UTF-8 or
	// windows-1252.
	HTMLBase64 []byte `json:"html_base64,omitempty"`
	// Record asks for the answer's Record.
	Record bool `json:"record,omitempty"`
}

// PageAnswer is robotsd's answer about a fetched page (POST /v1/page): robots.txt's answer for
// its URL and, when robots.txt allows the URL, the page's own robots rules for the crawler and
// its AI-use statements.
type PageAnswer struct {
	// Allowed is whether robots.txt allows the URL, as Check.Allowed.
	Allowed bool `json:"allowed"`
	// Check is robots.txt's answer for the URL, as Client.Check gives it.
	Check Answer `json:"check"`
	// Robots is the page's robots rules in force for the crawler (X-Robots-Tag headers and
	// robots meta tags together); nil when robots.txt disallows the URL: a crawler that obeys
	// it never fetches the page, so its rules are never read.
	Robots *PageRobots `json:"robots"`
	// Usage is the page's AI-use statements beside robots.txt's; nil when robots.txt disallows
	// the URL (no preference is implied for it).
	Usage *PageUsage `json:"usage"`
	// DocumentCut is true when only the document's first MaxPageDocumentBytes were read
	// (Client.Page sets it when it sent no more than those), so a rule past them is not in
	// the answer: the one thing that can leave a rule unread, since every header and every
	// meta tag of what is read counts, whole.
	DocumentCut bool `json:"document_cut,omitempty"`
	// Encoding is the charset the document was read in; nil when none was sent.
	Encoding *string `json:"encoding"`
	// Record is, when PageRequest.Record asked for it, what the page and its robots.txt said,
	// compact, to store beside the page as it is (format "robotsd-record/1": its URL, the time,
	// robots.txt's SHA-256 and deciding rule, the page's rules in force and its AI-use
	// statements with their sources, robotsd's version); nil otherwise.
	Record json.RawMessage `json:"record,omitempty"`
}

// Follow reports whether the crawler may follow the page's links: true unless the page's rules
// say nofollow (or none). With no answer (a nil *PageAnswer) or no rules read (robots.txt
// disallows the URL), it is true: nothing forbids it, and every link is still checked against
// robots.txt before it is fetched.
func (a *PageAnswer) Follow() bool {
	return a == nil || a.Robots == nil || a.Robots.Follow
}

// Index reports whether the crawler may index the page: true unless the page's rules say
// noindex (or none). With no answer or no rules read, it is true, as Follow is.
func (a *PageAnswer) Index() bool {
	return a == nil || a.Robots == nil || a.Robots.Index
}

// PageRobots is a page's robots rules in force for the crawler, combined as Google combines
// them: rules for every crawler and for the crawler's product tokens add up, and where they
// conflict the more restrictive wins.
type PageRobots struct {
	// Index: no noindex or none.
	Index bool `json:"index"`
	// Follow: no nofollow or none; the page's links may be followed.
	Follow bool `json:"follow"`
	// Snippet: no nosnippet (nor max-snippet:0).
	Snippet bool `json:"snippet"`
	// MaxSnippet is the longest text snippet in characters (0: no snippet); nil: no limit.
	MaxSnippet *int64 `json:"max_snippet"`
	// MaxImagePreview is "none", "standard" or "large"; nil: not stated.
	MaxImagePreview *string `json:"max_image_preview"`
	// MaxVideoPreview is the longest video preview in seconds (0: a static image at most, as
	// with nosnippet); nil: no limit.
	MaxVideoPreview *int64 `json:"max_video_preview"`
	// ImageIndex: no noimageindex.
	ImageIndex bool `json:"image_index"`
	// Translate: no notranslate.
	Translate bool `json:"translate"`
	// IndexIfEmbedded: indexifembedded with noindex (it has no effect without).
	IndexIfEmbedded bool `json:"index_if_embedded"`
	// UnavailableAfter is the earliest unavailable_after date (RFC 3339, UTC), or nil. Once
	// it is past (not later than At), Index is false.
	UnavailableAfter *string `json:"unavailable_after"`
	// IndexRule is the rule that made Index false: the first noindex or none, else the
	// unavailable_after past at At; nil when Index is true.
	IndexRule *PageRule `json:"index_rule"`
	// At is the time the rules were read at (RFC 3339, UTC).
	At string `json:"at"`
	// Uninterpreted lists the rules robotsd recognises but does not interpret (noarchive,
	// nocache, nositelinkssearchbox, noai, noimageai).
	Uninterpreted []string `json:"uninterpreted"`
	// Rules is every rule that applied to the crawler, ignored ones included, headers first:
	// at most 64, each cut at 256 bytes.
	Rules []PageRule `json:"rules"`
	// RulesTotal counts the rules that applied when Rules lists fewer (0 otherwise).
	RulesTotal int `json:"rules_total,omitempty"`
}

// PageRule is one robots rule that applied to the crawler, and where it was written: in a
// header (Header: its position among the headers sent, from 0) or in a meta tag (Line: the
// document line the tag ends on, from 1).
type PageRule struct {
	// Rule is the rule as written: "noindex", "max-snippet:50", ...
	Rule string `json:"rule"`
	// Agent is the agent it named (X-Robots-Tag: examplebot: ..., <meta name="examplebot">),
	// or nil: every crawler.
	Agent *string `json:"agent"`
	// Header is its header's position among the headers sent (PageHeaders, with Client.Page).
	Header *int `json:"header"`
	// Line is its meta tag's line in the document.
	Line *int `json:"line"`
	// Ignored is RuleUnknown or RuleUnparseable when the rule has no effect; empty when it
	// applies.
	Ignored string `json:"ignored,omitempty"`
	// LooksLike is the rule's words when it is unknown as a whole but each word separated by
	// spaces is a rule ("noindex nofollow" written without a comma): Google reads it as one
	// rule it does not know, so it restricts nothing. Nil otherwise.
	LooksLike []string `json:"looks_like,omitempty"`
}

// PageUsage is a page's AI-use statements, beside robots.txt's.
type PageUsage struct {
	// RobotsTxt is robots.txt's preferences for the URL, as Answer.Usage gives them; nil when
	// none applies.
	RobotsTxt *Usage `json:"robots_txt"`
	// ContentUsageHeader is the page's Content-Usage header (aipref).
	ContentUsageHeader ContentUsageHeader `json:"content_usage_header"`
	// TDM is TDMRep, from the headers and the document.
	TDM TDM `json:"tdm"`
	// Vocabulary names the revision of aipref's vocabulary Combined follows
	// ("draft-ietf-aipref-vocab-08").
	Vocabulary string `json:"vocabulary"`
	// Combined is, for each category of aipref's vocabulary ("train-ai", "ai-use", "search"),
	// robots.txt's statement and the header's combined: any "n" is "n", else any "y" is "y".
	// A use that qualifies as Search (vocab-08 §4.3: links to the page, excerpts only to judge
	// relevance, no summaries) is decided by "search" alone, whatever the others say.
	Combined map[string]CombinedUsage `json:"combined"`
}

// ContentUsageHeader is a page's Content-Usage header (draft-ietf-aipref-attach), its field
// lines read as one RFC 9651 Dictionary.
type ContentUsageHeader struct {
	// State is ContentUsageAbsent, ContentUsageUnparseable (every preference unknown) or
	// ContentUsageStated.
	State string `json:"state"`
	// Categories maps each label stated "y" or "n" to it (at most 16).
	Categories map[string]string `json:"categories"`
	// Headers are the positions of its field lines among the headers sent.
	Headers []int `json:"headers"`
	// CategoriesTotal counts the labels stated when Categories shows fewer (0 otherwise).
	CategoriesTotal int `json:"categories_total,omitempty"`
}

// TDM is W3C TDMRep: whether text and data mining rights are reserved. The document's meta
// tags supersede the headers.
type TDM struct {
	// Reservation is true: reserved (tdm-reservation 1), false: not reserved (0), nil: unset
	// (no layer gave 0 or 1). Another value sets nothing, so it never erases one given
	// before; one layer giving both 1 and 0 reserves.
	Reservation *bool `json:"reservation"`
	// Source is where the reservation came from: "well_known" (the origin's tdmrep.json,
	// with robotsd's --tdmrep), "header" or "meta", each superseding the one before; nil
	// when unset.
	Source *string `json:"source"`
	// Policy is the TDM policy's URL, only with a reservation.
	Policy *string `json:"policy"`
	// PolicySource is where the policy came from.
	PolicySource *string `json:"policy_source"`
	// Invalid names the layers ("well_known", "header", "meta") that gave a tdm-reservation
	// other than 0 or 1, which set nothing.
	Invalid []string `json:"invalid"`
	// WellKnown is what the origin's /.well-known/tdmrep.json says of the URL; nil unless
	// robotsd runs with --tdmrep.
	WellKnown *WellKnownFile `json:"well_known,omitempty"`
}

// WellKnownFile is the origin's /.well-known/tdmrep.json, for the page's URL.
type WellKnownFile struct {
	// URL is the file's URL.
	URL string `json:"url"`
	// State is "rule" (a rule covers the URL), "no_rule", "missing", "invalid",
	// "fetch_failed" or "refused".
	State string `json:"state"`
	// Rule is the covering rule's position in the file's array, from 0.
	Rule *int `json:"rule,omitempty"`
	// Reason says why there is no rule, when the file could not be used.
	Reason string `json:"reason,omitempty"`
}

// CombinedUsage is one aipref category combined over robots.txt and the header.
type CombinedUsage struct {
	// Value is "n" (any statement says n), else "y" (any says y), else nil (unknown).
	Value *string `json:"value"`
	// Sources are the statements that gave it a value: "robots_txt", "header".
	Sources []string `json:"sources"`
}

// Page asks robotsd about a page the crawler fetched (POST /v1/page): its robots rules for the
// crawler (X-Robots-Tag headers and robots meta tags), its AI-use statements, and robots.txt's
// answer for its URL. resp is the response (resp.Request.URL, after redirects, is the page's
// URL) and body the bytes read from its body (an http.Response body can be read once): give at
// least its first MaxPageDocumentBytes, and one byte more when there is more, so that the
// answer's DocumentCut is right. ua is the crawler; when empty, the request's User-Agent header
// (as the Transport checks), else "Go-http-client".
//
// Only the headers robotsd reads are sent (PageHeaders), and the document only when it is HTML
// (text/html or application/xhtml+xml; sniffed when the response has no Content-Type), at most
// its first MaxPageDocumentBytes, as bytes: robotsd reads it in its own charset. The header
// positions in the answer (PageRule.Header, ContentUsageHeader.Headers) are positions in
// PageHeaders(resp.Header).
//
// robotsd takes at most 256 headers, values of at most 16 KiB: a page sent with more (a site
// repeating X-Robots-Tag) is a *Problem error (400, invalid-page), as robotsd's other refusals
// are.
func (c *Client) Page(ctx context.Context, ua string, resp *http.Response, body []byte) (*PageAnswer, error) {
	if resp == nil || resp.Request == nil || resp.Request.URL == nil {
		return nil, errors.New("robotsd: Page needs the response's request (resp.Request.URL is the page's URL)")
	}
	if ua == "" {
		ua = resp.Request.Header.Get("User-Agent")
	}
	if ua == "" {
		ua = "Go-http-client"
	}
	request := PageRequest{
		URL:     resp.Request.URL.String(),
		UA:      []string{ua},
		Headers: PageHeaders(resp.Header),
	}
	cut := false
	if len(body) > 0 && isHTML(request.Headers, body) {
		if len(body) > MaxPageDocumentBytes {
			body = body[:MaxPageDocumentBytes]
			cut = true
		}
		request.HTMLBase64 = body
	}
	answer, err := c.PostPage(ctx, request)
	if err != nil {
		return nil, err
	}
	if cut {
		answer.DocumentCut = true
	}
	return answer, nil
}

// PostPage sends a page as given (POST /v1/page): for a crawler that keeps its response
// headers in their order as received, or its document as text (PageRequest.HTML).
func (c *Client) PostPage(ctx context.Context, request PageRequest) (*PageAnswer, error) {
	body, err := json.Marshal(request)
	if err != nil {
		return nil, err
	}
	var answer PageAnswer
	if err := c.do(ctx, http.MethodPost, "/v1/page", body, &answer); err != nil {
		return nil, err
	}
	return &answer, nil
}

// PageHeaders is the headers of h robotsd reads, as Client.Page sends them: Robots-Tag,
// X-Robots-Tag, Content-Usage, Tdm-Reservation, Tdm-Policy and Content-Type, name by name in
// that order, each name's values in the order received.
//
// An http.Header keeps the order of one name's values but not how different names were
// interleaved (X-Robots-Tag, Content-Usage, X-Robots-Tag arrive as X-Robots-Tag twice, then
// Content-Usage): the answer does not depend on it, but the header positions it gives are
// positions in this list, not in the response as it was received.
func PageHeaders(h http.Header) [][2]string {
	pairs := [][2]string{}
	for _, name := range pageHeaderNames {
		// Go canonicalises the names it receives; a Header filled by hand may hold others.
		keys := []string{}
		for key := range h {
			if key != name && strings.EqualFold(key, name) {
				keys = append(keys, key)
			}
		}
		sort.Strings(keys)
		for _, key := range append([]string{name}, keys...) {
			for _, value := range h[key] {
				pairs = append(pairs, [2]string{name, value})
			}
		}
	}
	return pairs
}

// isHTML reports whether a response is an HTML document: the media type of its (first)
// Content-Type among headers, or, without one, what the body looks like (WHATWG MIME sniffing).
func isHTML(headers [][2]string, body []byte) bool {
	contentType := ""
	for _, pair := range headers {
		if pair[0] == "Content-Type" {
			contentType = pair[1]
			break
		}
	}
	if strings.TrimSpace(contentType) == "" {
		contentType = http.DetectContentType(body)
	}
	mediaType, _, _ := strings.Cut(contentType, ";")
	switch strings.ToLower(strings.TrimSpace(mediaType)) {
	case "text/html", "application/xhtml+xml":
		return true
	}
	return false
}
