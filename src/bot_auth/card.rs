//! The Signature Agent Card (draft-meunier-webbotauth-registry-04): a JSON document that names
//! the fleet to sites, served at [`PATH`] when the fleet's product token is set. Its
//! `rfc9309-product-token` is the token robotsd checks robots.txt for before it signs, and
//! `rfc9309-compliance` is true because robotsd signs only what that token's rules allow (a check
//! for another agent is not signed). `jwks_uri` is the key directory (`--wba-agent`), and
//! `client_id` the card's own URL, which a reader compares with the URL it fetched.
//!
//! The draft registers no path for the card: robotsd serves it where the draft's own example
//! puts it. Pure: a function of the settings and the authority asked.

use serde_json::json;

/// Where robotsd serves the card.
pub const PATH: &str = "/.well-known/signature-agent-card";

/// The card served for a request to `authority`: `token` the fleet's product token, `jwks_uri`
/// the key directory's URL, `contact` the operator's (`--operator-contact`), if any.
pub fn card(authority: &str, token: &str, jwks_uri: &str, contact: Option<&str>) -> String {
    let mut card = json!({
        "client_id": format!("https://{}{PATH}", authority.to_ascii_lowercase()),
        "client_name": token,
        "jwks_uri": jwks_uri,
        "web_bot_auth": {
            "rfc9309-product-token": token,
            "rfc9309-compliance": true,
        },
    });
    if let Some(contact) = contact {
        card["contacts"] = json!([contact]);
    }
    card.to_string()
}

/// Whether a check of `agents` (its `ua` values) is made for `token`: one of the names they
/// give has it as its product token (ASCII case-insensitive, as robots.txt matches).
pub fn names_token<S: AsRef<str>>(agents: &[S], token: &str) -> bool {
    agents
        .iter()
        .flat_map(|ua| crate::user_agent::agents_in(ua.as_ref()))
        .filter_map(|agent| crate::user_agent::product_token(agent).ok())
        .any(|found| found.eq_ignore_ascii_case(token))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_card_names_the_token_the_directory_and_itself() {
        let agent = "https://bot.example/.well-known/http-message-signatures-directory";
        let written: serde_json::Value = serde_json::from_str(&card(
            "Bot.Example",
            "ExampleBot",
            agent,
            Some("mailto:crawl@example.com"),
        ))
        .unwrap();
        assert_eq!(
            written["client_id"],
            "https://bot.example/.well-known/signature-agent-card"
        );
        assert_eq!(written["jwks_uri"], agent);
        assert_eq!(written["contacts"][0], "mailto:crawl@example.com");
        assert_eq!(
            written["web_bot_auth"]["rfc9309-product-token"],
            "ExampleBot"
        );
        assert_eq!(written["web_bot_auth"]["rfc9309-compliance"], true);
        // Never both forms of keys (the draft: MUST NOT), and no contact unless given.
        assert!(written.get("jwks").is_none());
        let bare: serde_json::Value =
            serde_json::from_str(&card("bot.example", "ExampleBot", agent, None)).unwrap();
        assert!(bare.get("contacts").is_none());
    }

    #[test]
    fn a_check_names_the_token_in_any_of_its_forms() {
        for agents in [
            vec!["ExampleBot"],
            vec!["examplebot"],
            vec!["Mozilla/5.0 (compatible; ExampleBot/2.1; +https://bot.example/)"],
            vec!["OtherBot,ExampleBot"],
            vec!["OtherBot", "ExampleBot/1.0"],
        ] {
            assert!(names_token(&agents, "ExampleBot"), "{agents:?}");
        }
        for agents in [
            vec!["OtherBot"],
            vec!["ExampleBot-News"],
            vec!["Mozilla/5.0 (X11; Linux x86_64)"],
        ] {
            assert!(!names_token(&agents, "ExampleBot"), "{agents:?}");
        }
    }
}
