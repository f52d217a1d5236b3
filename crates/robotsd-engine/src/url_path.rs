//! Which part of a URL rules are matched against (SEMANTICS.md §1 "Path matching"): the path,
//! params and query, from the first `/`, `?` or `;` after the authority, without the fragment,
//! always starting with `/`. A port of the reference's `GetPathParamsQuery`, quirks included:
//! without a scheme the first segment is taken as the host (`a/b` → `/b`).

use std::borrow::Cow;

fn find_first_of(s: &[u8], from: usize, set: &[u8]) -> Option<usize> {
    s.get(from..)?
        .iter()
        .position(|b| set.contains(b))
        .map(|p| p + from)
}

/// The path, params and query of `url` as the engine matches them; `/` when there is none.
pub fn path_params_query(url: &str) -> Cow<'_, str> {
    let bytes = url.as_bytes();
    let search_start = if bytes.starts_with(b"//") { 2 } else { 0 };
    let early_path = find_first_of(bytes, search_start, b"/?;");
    let mut protocol_end =
        memchr::memmem::find(&bytes[search_start..], b"://").map(|p| p + search_start);
    if let (Some(early), Some(proto)) = (early_path, protocol_end) {
        // A path, param or query that starts before "://" means "://" is not a scheme separator.
        if early < proto {
            protocol_end = None;
        }
    }
    let authority_start = protocol_end.map_or(search_start, |p| p + 3);
    let Some(path_start) = find_first_of(bytes, authority_start, b"/?;") else {
        return Cow::Borrowed("/");
    };
    let hash = memchr::memchr(b'#', &bytes[search_start..]).map(|p| p + search_start);
    if hash.is_some_and(|h| h < path_start) {
        return Cow::Borrowed("/");
    }
    let path = &url[path_start..hash.unwrap_or(url.len())];
    if bytes[path_start] == b'/' {
        Cow::Borrowed(path)
    } else {
        Cow::Owned(format!("/{path}"))
    }
}

#[cfg(test)]
mod tests {
    use super::path_params_query as p;

    #[test]
    fn extracts_path_params_query() {
        assert_eq!(p("http://example.com/a/b?c=d#e"), "/a/b?c=d");
        assert_eq!(p("http://example.com"), "/");
        assert_eq!(p("example.com?a"), "/?a");
        assert_eq!(p("//a/b/c"), "/b/c");
        assert_eq!(p("http://h#frag/x"), "/");
    }
}
