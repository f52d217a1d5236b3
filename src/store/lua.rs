//! A Lua script as the Redis store runs it: called by its SHA-1 (`EVALSHA`), so that each call
//! sends the digest and not the script's text (the pacing scripts are about 1.5 KB; with the
//! text, every reservation made Redis read and hash it again: about 19 µs of Redis's one thread
//! a call, measured in issue 42). A Redis that does not hold the script yet (a new server, a
//! replica just promoted, a `SCRIPT FLUSH`) answers `NOSCRIPT`; the store then loads it
//! (`SCRIPT LOAD`, on every master of a cluster) and calls again, once.

/// A script and its SHA-1, made once when the store is.
pub(super) struct Lua {
    text: String,
    sha: String,
}

impl Lua {
    /// The script `text`, with its digest.
    pub(super) fn new(text: impl Into<String>) -> Lua {
        let text = text.into();
        let sha = redis::Script::new(&text).get_hash().to_owned();
        Lua { text, sha }
    }

    /// Its text.
    #[cfg(test)]
    pub(super) fn text(&self) -> &str {
        &self.text
    }

    /// `EVALSHA digest <keys>`, for the caller to add the script's arguments to.
    pub(super) fn call(&self, keys: &[String]) -> redis::Cmd {
        let mut command = redis::cmd("EVALSHA");
        command.arg(&self.sha).arg(keys.len());
        for key in keys {
            command.arg(key);
        }
        command
    }

    /// `SCRIPT LOAD <text>`: what makes a Redis that answered `NOSCRIPT` hold it.
    pub(super) fn load(&self) -> redis::Cmd {
        let mut command = redis::cmd("SCRIPT");
        command.arg("LOAD").arg(&self.text);
        command
    }
}

/// Whether `error` is Redis saying it does not hold the script called.
pub(super) fn missing(error: &redis::RedisError) -> bool {
    error.code() == Some("NOSCRIPT")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_names_the_scripts_sha1_and_its_keys() {
        let lua = Lua::new("return 1");
        // SHA-1 of "return 1", as Redis computes it (`SCRIPT LOAD "return 1"`).
        assert_eq!(lua.sha, "e0e1f9fabfc9d4800c877a703b823ac0578ff8db");
        let packed = lua.call(&["a".into(), "b".into()]).get_packed_command();
        let text = String::from_utf8(packed).expect("ASCII");
        assert!(text.contains("EVALSHA"), "{text}");
        assert!(
            text.contains("e0e1f9fabfc9d4800c877a703b823ac0578ff8db"),
            "{text}"
        );
        assert!(!text.contains("return 1"), "{text}");
        let load = String::from_utf8(lua.load().get_packed_command()).expect("ASCII");
        assert!(load.contains("LOAD") && load.contains("return 1"), "{load}");
    }
}
