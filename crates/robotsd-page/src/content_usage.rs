//! The `Content-Usage` response header (draft-ietf-aipref-attach-05 §2): an RFC 9651
//! Dictionary of usage preferences for the message's content, read as
//! draft-ietf-aipref-vocab-08 §6.5 says. A member whose value is the Token `y` allows its
//! category, `n` disallows it, anything else leaves it unknown; a key repeated keeps its last
//! value; a Dictionary that does not parse (an upper-case key, a trailing comma) states
//! nothing at all. Several field lines are one Dictionary, joined with commas (RFC 9110 §5.3).
//!
//! Labels outside the vocabulary are kept as written, as robots.txt's `Content-Usage` lines
//! report them ([`robotsd_engine::UsageSource::knows`] tells them apart); only the vocabulary's
//! categories are ever combined with other statements.

use robotsd_engine::Preference;

/// One member of the Dictionary with a preference: its label and value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stated {
    /// The key, as written (case-sensitive, as the vocabulary is).
    pub category: String,
    /// `y` or `n`.
    pub preference: Preference,
}

/// What a response's `Content-Usage` field lines state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HeaderUsage {
    /// No `Content-Usage` field.
    Absent,
    /// The field does not parse as a Dictionary: every preference is unknown.
    Unparseable,
    /// The members with a `y` or `n` preference, in the order of their keys' first appearance.
    Stated(Vec<Stated>),
}

/// Reads the values of every `Content-Usage` field line of a response, in order.
pub fn read<'a>(lines: impl IntoIterator<Item = &'a str>) -> HeaderUsage {
    let mut joined: Option<String> = None;
    for line in lines {
        match &mut joined {
            Some(joined) => {
                joined.push_str(", ");
                joined.push_str(line);
            }
            None => joined = Some(line.to_owned()),
        }
    }
    let Some(joined) = joined else {
        return HeaderUsage::Absent;
    };
    let Ok(dictionary) = sfv::Parser::new(joined.as_bytes()).parse::<sfv::Dictionary>() else {
        return HeaderUsage::Unparseable;
    };
    HeaderUsage::Stated(
        dictionary
            .iter()
            .filter_map(|(key, entry)| {
                let sfv::ListEntry::Item(item) = entry else {
                    return None;
                };
                let preference = match item.bare_item.as_token()?.as_str() {
                    "y" => Preference::Allowed,
                    "n" => Preference::Disallowed,
                    _ => return None,
                };
                Some(Stated {
                    category: key.as_str().to_owned(),
                    preference,
                })
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stated(pairs: &[(&str, Preference)]) -> HeaderUsage {
        HeaderUsage::Stated(
            pairs
                .iter()
                .map(|(category, preference)| Stated {
                    category: (*category).into(),
                    preference: *preference,
                })
                .collect(),
        )
    }

    use Preference::{Allowed as Y, Disallowed as N};

    #[test]
    fn the_attach_drafts_example() {
        // draft-ietf-aipref-attach-05 §1.2.
        assert_eq!(read(["train-ai=n"]), stated(&[("train-ai", N)]));
    }

    #[test]
    fn the_vocab_drafts_serialisation_examples() {
        // draft-ietf-aipref-vocab-08 §6: allow training, disallow search.
        assert_eq!(
            read(["train-ai=y, search=n"]),
            stated(&[("train-ai", Y), ("search", N)])
        );
        // The last value of a repeated key applies; a Boolean and a String are not tokens, so
        // both preferences are unknown.
        assert_eq!(
            read([r#"train-ai=y, train-ai, search=n, search="n""#]),
            stated(&[])
        );
        // Parameters are ignored: `train-ai` is allowed.
        assert_eq!(
            read(["train-ai;allow=n, train-ai=y"]),
            stated(&[("train-ai", Y)])
        );
        // As the draft writes it, with a trailing `;`, it does not parse: nothing is stated.
        assert_eq!(
            read([r#"train-ai;has;parameters="?";"#]),
            HeaderUsage::Unparseable
        );
    }

    #[test]
    fn an_upper_case_key_makes_the_whole_field_unparseable() {
        // vocab-08 §6.5.1: keys are lower case; a failed parse means no preference.
        assert_eq!(read(["Train-AI=n"]), HeaderUsage::Unparseable);
        assert_eq!(read(["search=y, Train-AI=n"]), HeaderUsage::Unparseable);
    }

    #[test]
    fn several_field_lines_are_one_dictionary() {
        assert_eq!(
            read(["train-ai=y", "search=n", "train-ai=n"]),
            stated(&[("train-ai", N), ("search", N)])
        );
        // One bad line spoils the whole field, as it would joined.
        assert_eq!(read(["train-ai=n", "search=n,"]), HeaderUsage::Unparseable);
    }

    #[test]
    fn values_other_than_y_and_n_and_unknown_labels() {
        assert_eq!(
            read(["train-ai=maybe, search=?1, bots=n"]),
            stated(&[("bots", N)])
        );
        assert_eq!(read(std::iter::empty()), HeaderUsage::Absent);
        assert_eq!(read([""]), stated(&[]));
    }
}
