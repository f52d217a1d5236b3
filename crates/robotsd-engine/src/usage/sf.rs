//! RFC 9651 (Structured Field Values) Dictionaries, as far as a statement of preference needs
//! them: the whole grammar is checked, since a statement that does not parse states nothing
//! (draft-ietf-aipref-vocab §6.5), but of each member only its key and, when the value is a
//! Token, the token are kept. Parameters are checked and dropped (the vocabulary gives them no
//! meaning).
//!
//! Checked against the Structured Field test suite (`tests/data/structured-field-tests`,
//! from github.com/httpwg/structured-field-tests) in `usage/tests.rs`.

/// One dictionary member: its key and, when its value is a Token, the token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Member<'a> {
    pub(crate) key: &'a [u8],
    /// `None` for any other value: an Integer, a String, a Boolean (a bare key), an Inner List…
    pub(crate) token: Option<&'a [u8]>,
}

/// Where parsing failed, for nothing more than "this is not a Structured Field Dictionary".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct NotADictionary;

type Parsed<T> = Result<T, NotADictionary>;

/// Parses `input` as a Dictionary (RFC 9651 §4.2 with §4.2.2): members in the order their keys
/// first appear, each with the value of its last occurrence.
pub(crate) fn parse_dictionary(input: &[u8]) -> Parsed<Vec<Member<'_>>> {
    let mut p = Parser::top_level(input)?;
    let mut members: Vec<Member<'_>> = Vec::new();
    while !p.is_empty() {
        let key = p.key()?;
        let token = if p.eat(b'=') {
            p.item_or_inner_list()?
        } else {
            // A bare key is the Boolean true, with parameters.
            p.parameters()?;
            None
        };
        members.push(Member { key, token });
        p.skip_ows();
        if p.is_empty() {
            break;
        }
        if !p.eat(b',') {
            return Err(NotADictionary);
        }
        p.skip_ows();
        if p.is_empty() {
            // A trailing comma.
            return Err(NotADictionary);
        }
    }
    p.end()?;
    Ok(last_value_wins(members))
}

/// Parses `input` as an Item (RFC 9651 §4.2 with §4.2.3): its token, if it is one. For the test
/// suite, whose Item cases check the bare-item grammar.
#[cfg(test)]
pub(crate) fn parse_item(input: &[u8]) -> Parsed<Option<&[u8]>> {
    let mut p = Parser::top_level(input)?;
    let token = p.item()?;
    p.end()?;
    Ok(token)
}

/// Parses `input` as a List (RFC 9651 §4.2 with §4.2.1): each member's token, if it is one. For
/// the test suite only: preferences are Dictionaries.
#[cfg(test)]
pub(crate) fn parse_list(input: &[u8]) -> Parsed<Vec<Option<&[u8]>>> {
    let mut p = Parser::top_level(input)?;
    let mut members = Vec::new();
    while !p.is_empty() {
        members.push(p.item_or_inner_list()?);
        p.skip_ows();
        if p.is_empty() {
            break;
        }
        if !p.eat(b',') {
            return Err(NotADictionary);
        }
        p.skip_ows();
        if p.is_empty() {
            return Err(NotADictionary);
        }
    }
    p.end()?;
    Ok(members)
}

/// A repeated key keeps its first position and takes its last value (§4.2.2 "overwrite").
/// Sorting keeps this O(n log n) for a hostile line of thousands of members.
fn last_value_wins(members: Vec<Member<'_>>) -> Vec<Member<'_>> {
    if members.len() < 2 {
        return members;
    }
    let mut order: Vec<usize> = (0..members.len()).collect();
    order.sort_by(|&a, &b| members[a].key.cmp(members[b].key).then(a.cmp(&b)));
    // For each key: (first position, last position).
    let mut kept: Vec<(usize, usize)> = Vec::new();
    for &i in &order {
        match kept.last_mut() {
            Some((first, last)) if members[*first].key == members[i].key => *last = i,
            _ => kept.push((i, i)),
        }
    }
    kept.sort_unstable();
    kept.into_iter()
        .map(|(first, last)| Member {
            key: members[first].key,
            token: members[last].token,
        })
        .collect()
}

struct Parser<'a> {
    input: &'a [u8],
    at: usize,
}

impl<'a> Parser<'a> {
    /// §4.2 steps 1–3: ASCII only, leading spaces discarded.
    fn top_level(input: &'a [u8]) -> Parsed<Parser<'a>> {
        if !input.is_ascii() {
            return Err(NotADictionary);
        }
        let mut p = Parser { input, at: 0 };
        while p.peek() == Some(b' ') {
            p.at += 1;
        }
        Ok(p)
    }

    /// §4.2 steps 6–7: trailing spaces discarded, then nothing may remain.
    fn end(&mut self) -> Parsed<()> {
        while self.peek() == Some(b' ') {
            self.at += 1;
        }
        if self.is_empty() {
            Ok(())
        } else {
            Err(NotADictionary)
        }
    }

    fn is_empty(&self) -> bool {
        self.at >= self.input.len()
    }

    fn peek(&self) -> Option<u8> {
        self.input.get(self.at).copied()
    }

    fn eat(&mut self, byte: u8) -> bool {
        let found = self.peek() == Some(byte);
        self.at += usize::from(found);
        found
    }

    fn skip_ows(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t')) {
            self.at += 1;
        }
    }

    /// A run of bytes for which `keep` holds, starting here.
    fn run(&mut self, keep: impl Fn(u8) -> bool) -> &'a [u8] {
        let start = self.at;
        while self.peek().is_some_and(&keep) {
            self.at += 1;
        }
        &self.input[start..self.at]
    }

    /// §4.2.3.3: `( lcalpha / "*" ) *( lcalpha / DIGIT / "_" / "-" / "." / "*" )`.
    fn key(&mut self) -> Parsed<&'a [u8]> {
        if !matches!(self.peek(), Some(b'a'..=b'z' | b'*')) {
            return Err(NotADictionary);
        }
        Ok(self.run(|b| matches!(b, b'a'..=b'z' | b'0'..=b'9' | b'_' | b'-' | b'.' | b'*')))
    }

    /// §4.2.1.1: an Inner List or an Item; the token, when the value is one.
    fn item_or_inner_list(&mut self) -> Parsed<Option<&'a [u8]>> {
        if self.peek() == Some(b'(') {
            self.inner_list()?;
            Ok(None)
        } else {
            self.item()
        }
    }

    /// §4.2.1.2.
    fn inner_list(&mut self) -> Parsed<()> {
        self.at += 1;
        loop {
            while self.peek() == Some(b' ') {
                self.at += 1;
            }
            match self.peek() {
                None => return Err(NotADictionary),
                Some(b')') => {
                    self.at += 1;
                    return self.parameters();
                }
                Some(_) => {
                    self.item()?;
                    if !matches!(self.peek(), Some(b' ' | b')')) {
                        return Err(NotADictionary);
                    }
                }
            }
        }
    }

    /// §4.2.3: a Bare Item and its Parameters.
    fn item(&mut self) -> Parsed<Option<&'a [u8]>> {
        let token = self.bare_item()?;
        self.parameters()?;
        Ok(token)
    }

    /// §4.2.3.2: `*( ";" *SP key [ "=" bare-item ] )`.
    fn parameters(&mut self) -> Parsed<()> {
        while self.eat(b';') {
            while self.peek() == Some(b' ') {
                self.at += 1;
            }
            self.key()?;
            if self.eat(b'=') {
                self.bare_item()?;
            }
        }
        Ok(())
    }

    /// §4.2.3.1; the token, when the bare item is one.
    fn bare_item(&mut self) -> Parsed<Option<&'a [u8]>> {
        match self.peek() {
            Some(b'-' | b'0'..=b'9') => self.number(false).map(|_| None),
            Some(b'"') => self.string().map(|()| None),
            Some(b'*' | b'A'..=b'Z' | b'a'..=b'z') => Ok(Some(self.token())),
            Some(b':') => self.byte_sequence().map(|()| None),
            Some(b'?') => self.boolean().map(|()| None),
            Some(b'@') => {
                self.at += 1;
                self.number(true).map(|_| None)
            }
            Some(b'%') => self.display_string().map(|()| None),
            _ => Err(NotADictionary),
        }
    }

    /// §4.2.4 (Integer or Decimal); §4.2.9 needs an Integer (`integer_only`).
    fn number(&mut self, integer_only: bool) -> Parsed<()> {
        self.eat(b'-');
        if !self.peek().is_some_and(|b| b.is_ascii_digit()) {
            return Err(NotADictionary);
        }
        let integer = self.run(|b| b.is_ascii_digit()).len();
        if self.peek() != Some(b'.') {
            return if integer > 15 {
                Err(NotADictionary)
            } else {
                Ok(())
            };
        }
        if integer_only || integer > 12 {
            return Err(NotADictionary);
        }
        self.at += 1;
        let fraction = self.run(|b| b.is_ascii_digit()).len();
        if (1..=3).contains(&fraction) {
            Ok(())
        } else {
            Err(NotADictionary)
        }
    }

    /// §4.2.5: printable ASCII, with `\"` and `\\` the only escapes.
    fn string(&mut self) -> Parsed<()> {
        self.at += 1;
        loop {
            match self.peek() {
                None => return Err(NotADictionary),
                Some(b'"') => {
                    self.at += 1;
                    return Ok(());
                }
                Some(b'\\') => {
                    self.at += 1;
                    if !matches!(self.peek(), Some(b'"' | b'\\')) {
                        return Err(NotADictionary);
                    }
                    self.at += 1;
                }
                Some(0x20..=0x7e) => self.at += 1,
                Some(_) => return Err(NotADictionary),
            }
        }
    }

    /// §4.2.6: the first character (ALPHA or `*`) was checked by the caller.
    fn token(&mut self) -> &'a [u8] {
        let start = self.at;
        self.at += 1;
        self.run(|b| is_tchar(b) || b == b':' || b == b'/');
        &self.input[start..self.at]
    }

    /// §4.2.7: base64 between colons. `=` only pads the end; missing padding is accepted, as
    /// §4.2.7 asks.
    fn byte_sequence(&mut self) -> Parsed<()> {
        self.at += 1;
        let content = self.run(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'='));
        let padding = content
            .iter()
            .position(|&b| b == b'=')
            .unwrap_or(content.len());
        if content[padding..].iter().any(|&b| b != b'=') {
            return Err(NotADictionary);
        }
        if self.eat(b':') {
            Ok(())
        } else {
            Err(NotADictionary)
        }
    }

    /// §4.2.8: `?0` or `?1`.
    fn boolean(&mut self) -> Parsed<()> {
        self.at += 1;
        if self.eat(b'0') || self.eat(b'1') {
            Ok(())
        } else {
            Err(NotADictionary)
        }
    }

    /// §4.2.10: `%"…"` with lower-case `%xx` escapes that must decode to UTF-8.
    fn display_string(&mut self) -> Parsed<()> {
        self.at += 1;
        if !self.eat(b'"') {
            return Err(NotADictionary);
        }
        let mut octets = Vec::new();
        loop {
            match self.peek() {
                None => return Err(NotADictionary),
                Some(b'"') => {
                    self.at += 1;
                    return match std::str::from_utf8(&octets) {
                        Ok(_) => Ok(()),
                        Err(_) => Err(NotADictionary),
                    };
                }
                Some(b'%') => {
                    let high = self.input.get(self.at + 1).copied().and_then(lower_hex);
                    let low = self.input.get(self.at + 2).copied().and_then(lower_hex);
                    let (Some(high), Some(low)) = (high, low) else {
                        return Err(NotADictionary);
                    };
                    octets.push(high << 4 | low);
                    self.at += 3;
                }
                Some(byte @ 0x20..=0x7e) => {
                    octets.push(byte);
                    self.at += 1;
                }
                Some(_) => return Err(NotADictionary),
            }
        }
    }
}

/// RFC 9110 `tchar`.
fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

fn lower_hex(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        _ => None,
    }
}
