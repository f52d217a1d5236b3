//! The `Robots-Tag` response header (draft-illyes-repext-03 §3.1.1): the robots rules of a
//! response out of the `X-` space, with a syntax of its own. The field is an RFC 9651 List;
//! each member is an Item naming a product token (or `*`, every crawler) and its Parameters are
//! the rules for it: `Robots-Tag: *;nosnippet, ExampleBot;noindex`. All its rules restrict, and a
//! crawler takes the union of the rules for its tokens and for `*` (§3.1.1), as it does for
//! `X-Robots-Tag` and `meta` tags, which it reads beside ([`crate::page`]).
//!
//! A parser must read at least 8 KiB of the field, honour every complete, valid member before a
//! cut and ignore the rest (§3.1.1). robotsd reads a field whole (the API bounds a value at
//! 16 KiB). Where robotsd decides: rules are case-insensitive (§3.1.3) while RFC 9651 keys are
//! lower case, so a field that does not parse is read again in lower case; and a member that
//! still does not parse is listed as unparseable while the members around it count, so that a
//! typo in one member never drops the others' rules.

use sfv::{BareItem, Item, ListEntry, Parser};

/// One rule a `Robots-Tag` field states: the product token it is for (`None`: `*`, every
/// crawler), and the rule as `X-Robots-Tag` writes it (`noindex`, `max-snippet:50`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TagRule {
    /// The product token, as written; `None` for `*`.
    pub agent: Option<String>,
    /// The rule, as `X-Robots-Tag` writes it.
    pub text: String,
}

/// What one `Robots-Tag` field line says.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TagLine {
    /// Its rules, in order.
    pub rules: Vec<TagRule>,
    /// The members that do not parse (or name no product token), joined by `, `: not read.
    pub unparseable: Option<String>,
}

/// Reads one `Robots-Tag` field line.
pub fn field_line(value: &str) -> TagLine {
    let trimmed = value.trim_matches([' ', '\t']);
    if trimmed.is_empty() {
        return TagLine::default();
    }
    for text in [trimmed.to_owned(), trimmed.to_ascii_lowercase()] {
        if let Ok(list) = Parser::new(text.as_bytes()).parse::<sfv::List>() {
            let mut line = TagLine::default();
            for entry in &list {
                match entry {
                    ListEntry::Item(item) if member(item, &mut line.rules) => {}
                    // An Inner List, or an Item that names no product token: the members are
                    // read one at a time.
                    _ => return member_by_member(&text),
                }
            }
            return line;
        }
    }
    member_by_member(&trimmed.to_ascii_lowercase())
}

/// The members of a field that does not parse as a List, read one at a time: a member that
/// does not parse is listed as unparseable and the members after it still count, since every
/// rule restricts and one broken member must not drop another's `noindex`.
fn member_by_member(text: &str) -> TagLine {
    let mut line = TagLine::default();
    let mut broken: Vec<&str> = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        let (member_text, after) = split_member(rest);
        let member_text = member_text.trim_matches([' ', '\t']);
        let parsed = Parser::new(member_text.as_bytes()).parse::<Item>();
        match parsed {
            Ok(item) if member(&item, &mut line.rules) => {}
            _ if member_text.is_empty() => {}
            _ => broken.push(member_text),
        }
        rest = after;
    }
    line.unparseable = (!broken.is_empty()).then(|| broken.join(", "));
    line
}

/// The text up to the next comma outside a String, and what follows it.
fn split_member(text: &str) -> (&str, &str) {
    let (mut quoted, mut escaped) = (false, false);
    for (i, c) in text.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if quoted => escaped = true,
            '"' => quoted = !quoted,
            ',' if !quoted => return (&text[..i], &text[i + 1..]),
            _ => {}
        }
    }
    (text, "")
}

/// Adds the rules of one member; `false` when it names no product token.
fn member(item: &Item, rules: &mut Vec<TagRule>) -> bool {
    let Some(token) = item.bare_item.as_token() else {
        return false;
    };
    let agent = (token.as_str() != "*").then(|| token.as_str().to_owned());
    for (key, value) in &item.params {
        let text = match value {
            BareItem::Boolean(true) => key.as_str().to_owned(),
            // `noindex=?0` states no rule.
            BareItem::Boolean(false) => continue,
            BareItem::Integer(n) => format!("{}:{n}", key.as_str()),
            BareItem::Decimal(d) => format!("{}:{d}", key.as_str()),
            BareItem::String(s) => format!("{}:{}", key.as_str(), s.as_str()),
            BareItem::Token(t) => format!("{}:{}", key.as_str(), t.as_str()),
            BareItem::ByteSequence(_) | BareItem::Date(_) | BareItem::DisplayString(_) => {
                format!("{}:?", key.as_str())
            }
        };
        rules.push(TagRule {
            agent: agent.clone(),
            text,
        });
    }
    true
}

#[cfg(test)]
mod tests;
