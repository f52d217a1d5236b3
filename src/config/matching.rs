//! How answers are matched: `--percent-decoding`, the default of the `percent_decoding`
//! parameter (docs/behaviour.md, "Percent-decoding").

use robotsd_engine::PercentDecoding;

/// How percent-encoded unreserved characters compare: the choices of `--percent-decoding`, of
/// `robotsd eval --percent-decoding` and of the API's `percent_decoding` parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum DecodingName {
    /// Google's reference: nothing is decoded (`/%70rivate` is not `/private`).
    #[default]
    Google,
    /// RFC 9309 §2.2.2 and §2.2.3: paths and rules in one form (escapes of unreserved characters
    /// decoded, `%2A` and `%24` match the URL's `*` and `$`, the query's `:` `/` `?` `@`
    /// compared encoded).
    Rfc9309,
}

impl From<DecodingName> for PercentDecoding {
    fn from(name: DecodingName) -> Self {
        match name {
            DecodingName::Google => PercentDecoding::Google,
            DecodingName::Rfc9309 => PercentDecoding::Rfc9309,
        }
    }
}

/// The flags of matching.
#[derive(Debug, Clone, clap::Args)]
#[command(next_help_heading = "Matching")]
pub struct MatchingArgs {
    /// How percent-encoded unreserved characters compare when a request does not say:
    /// `google` (exactly as Google's reference) or `rfc9309` (decoded, as RFC 9309 §2.2.2).
    #[arg(long, env = "ROBOTSD_PERCENT_DECODING", default_value = "google")]
    #[arg(value_enum, value_name = "MODE")]
    pub percent_decoding: DecodingName,
}

#[cfg(test)]
mod tests {
    use super::super::tests::{parse, settings};
    use super::*;

    #[test]
    fn google_is_the_default_and_rfc9309_the_choice() {
        assert_eq!(
            settings(&[]).unwrap().percent_decoding,
            PercentDecoding::Google
        );
        assert_eq!(
            settings(&["--percent-decoding", "rfc9309"])
                .unwrap()
                .percent_decoding,
            PercentDecoding::Rfc9309
        );
        let message = parse(&["--percent-decoding", "rfc"])
            .unwrap_err()
            .to_string();
        assert!(
            message.contains("google") && message.contains("rfc9309"),
            "{message}"
        );
    }
}
