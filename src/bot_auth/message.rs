//! RFC 9421 signature bases: the covered components with their values, one line each, then
//! `@signature-params`, serialized as the `Signature-Input` member carries it. Pure: values in,
//! text out, no clock and no key.

use sfv::{InnerListSerializer, KeyRef, StringRef};

use super::BotAuthError;

/// A covered component: its identifier (a Structured Field string with parameters) and the
/// value the message gives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Component {
    /// The component's name: `@authority`, `signature-agent`, ...
    pub name: &'static str,
    /// Its parameters, in order: `key="sig1"` for a dictionary member, `req` (true) for a
    /// request's component in a response's signature.
    pub params: Vec<(&'static str, Param)>,
    /// The value, as the signature base writes it (RFC 9421 §2.1, §2.2).
    pub value: String,
}

/// A component identifier's parameter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Param {
    /// `;name="value"`.
    String(String),
    /// `;name` (a boolean true).
    Flag,
}

/// The signature's parameters, serialized in this order (the order is part of what is signed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignatureParams {
    /// `created`: Unix seconds.
    pub created: u64,
    /// `keyid`: the key's JWK thumbprint.
    pub keyid: String,
    /// `alg`, when given.
    pub alg: Option<&'static str>,
    /// `expires`: Unix seconds.
    pub expires: u64,
    /// `nonce`, when given: base64.
    pub nonce: Option<String>,
    /// `tag`: the application (`web-bot-auth`, `http-message-signatures-directory`).
    pub tag: &'static str,
}

fn string(value: &str) -> Result<&StringRef, BotAuthError> {
    StringRef::from_str(value).map_err(|_| BotAuthError::NotAStructuredString(value.to_owned()))
}

fn integer(value: u64) -> Result<sfv::Integer, BotAuthError> {
    sfv::Integer::try_from(value).map_err(|_| BotAuthError::TimeOutOfRange(value))
}

fn component_id(list: &mut InnerListSerializer<'_>, c: &Component) -> Result<(), BotAuthError> {
    let mut item = list.bare_item(string(c.name)?);
    for (name, param) in &c.params {
        let key = KeyRef::from_str(name).map_err(|_| BotAuthError::NotAKey((*name).to_owned()))?;
        item = match param {
            Param::String(value) => item.parameter(key, string(value)?),
            Param::Flag => item.parameter(key, true),
        };
    }
    Ok(())
}

/// The component's identifier as a line of the signature base names it (`"@authority"`,
/// `"signature-agent";key="sig1"`).
fn line_id(c: &Component) -> Result<String, BotAuthError> {
    // An inner list of one item, without its parentheses: sfv serializes an item with its
    // parameters only inside a list or as a field of its own.
    let mut out = String::new();
    {
        let mut list = sfv::ListSerializer::with_buffer(&mut out);
        let mut inner = list.inner_list();
        component_id(&mut inner, c)?;
    }
    Ok(out[1..out.len() - 1].to_owned())
}

/// The `@signature-params` value: the covered components' identifiers as an inner list, then
/// the parameters. It is also what follows `label=` in `Signature-Input`.
pub fn signature_params(
    components: &[Component],
    params: &SignatureParams,
) -> Result<String, BotAuthError> {
    let mut out = String::new();
    let mut list = sfv::ListSerializer::with_buffer(&mut out);
    let mut inner = list.inner_list();
    for c in components {
        component_id(&mut inner, c)?;
    }
    let mut p = inner
        .finish()
        .parameter(KeyRef::constant("created"), integer(params.created)?)
        .parameter(KeyRef::constant("keyid"), string(&params.keyid)?);
    if let Some(alg) = params.alg {
        p = p.parameter(KeyRef::constant("alg"), string(alg)?);
    }
    p = p.parameter(KeyRef::constant("expires"), integer(params.expires)?);
    if let Some(nonce) = &params.nonce {
        p = p.parameter(KeyRef::constant("nonce"), string(nonce)?);
    }
    let _ = p.parameter(KeyRef::constant("tag"), string(params.tag)?);
    drop(list);
    Ok(out)
}

/// The signature base (RFC 9421 §2.5): a line per component, `"id": value`, then
/// `"@signature-params": ` and `signature_params`, without a final newline.
pub fn signature_base(
    components: &[Component],
    signature_params: &str,
) -> Result<String, BotAuthError> {
    let mut base = String::new();
    for c in components {
        if c.value.bytes().any(|b| b == b'\n' || b == b'\r') {
            return Err(BotAuthError::NotAStructuredString(c.value.clone()));
        }
        base.push_str(&line_id(c)?);
        base.push_str(": ");
        base.push_str(&c.value);
        base.push('\n');
    }
    base.push_str("\"@signature-params\": ");
    base.push_str(signature_params);
    Ok(base)
}

/// `value` as a Structured Field string (quoted, escaped): how a dictionary member's value is
/// written in the header and in the signature base.
pub fn sf_string(value: &str) -> Result<String, BotAuthError> {
    let mut out = String::new();
    let _ = sfv::ItemSerializer::with_buffer(&mut out).bare_item(string(value)?);
    Ok(out)
}
