//! A fetched page's own rules for crawlers, read exactly and without IO: the robots rules of its
//! `X-Robots-Tag` headers and robots `meta` tags ([`directives`], combined for an agent by
//! [`robots`]), and the AI-use reservations it carries: aipref's `Content-Usage` header
//! ([`content_usage`]) and W3C TDMRep ([`tdm`]). [`html`] finds the `meta` tags a browser would,
//! and [`page::read`] puts it together for one page and one crawler.
//!
//! What robotsd makes of the page beside robots.txt, and where it differs from the documents it
//! follows, is in the service's `docs/page.md`.

#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod content_usage;
pub mod date;
pub mod directives;
pub mod html;
pub mod page;
pub mod robots;
pub mod robots_tag;
pub mod tdm;
