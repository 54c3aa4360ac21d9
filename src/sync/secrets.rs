//! Secret-like strings in events about to be pushed: provider API keys, private key blocks,
//! bearer tokens, `.env`-style `*_KEY=`/`*_TOKEN=`/`*_SECRET=` assignments. A finding names
//! the kind, never the secret.

use std::sync::OnceLock;

use regex::Regex;

struct Pattern {
    kind: &'static str,
    regex: &'static str,
}

const PATTERNS: &[Pattern] = &[
    Pattern { kind: "Anthropic API key", regex: r"\bsk-ant-[A-Za-z0-9_\-]{20,}" },
    Pattern { kind: "OpenAI-style API key", regex: r"\bsk-(?:proj-)?[A-Za-z0-9_\-]{20,}" },
    Pattern { kind: "AWS access key id", regex: r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b" },
    Pattern {
        kind: "GitHub token",
        regex: r"\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,}\b|\bgithub_pat_[A-Za-z0-9_]{40,}",
    },
    Pattern { kind: "Slack token", regex: r"\bxox[abprs]-[A-Za-z0-9\-]{10,}" },
    Pattern { kind: "Google API key", regex: r"\bAIza[0-9A-Za-z_\-]{35}\b" },
    Pattern {
        kind: "private key block",
        regex: r"-----BEGIN (?:RSA |EC |DSA |OPENSSH |PGP |ENCRYPTED )?PRIVATE KEY( BLOCK)?-----",
    },
    Pattern { kind: "bearer token", regex: r"(?i)\bauthorization:\s*bearer\s+[A-Za-z0-9\-._~+/]{16,}=*" },
    Pattern {
        kind: "secret assignment",
        regex: r#"(?m)^\s*(?:export\s+)?[A-Z0-9_]*(?:_KEY|_TOKEN|_SECRET|_PASSWORD)\s*=\s*["']?[^\s"'$]{8,}"#,
    },
];

fn compiled() -> &'static [(&'static str, Regex)] {
    static COMPILED: OnceLock<Vec<(&'static str, Regex)>> = OnceLock::new();
    COMPILED.get_or_init(|| {
        PATTERNS
            .iter()
            // The patterns are constants covered by tests: they always compile.
            .filter_map(|p| Regex::new(p.regex).ok().map(|r| (p.kind, r)))
            .collect()
    })
}

/// The kinds of secret found in `text`, each once, in table order.
pub fn scan(text: &str) -> Vec<&'static str> {
    let mut kinds = Vec::new();
    for (kind, regex) in compiled() {
        if regex.is_match(text) && !kinds.contains(kind) {
            // An Anthropic key also looks like an OpenAI one: report the specific kind.
            if *kind == "OpenAI-style API key" && kinds.contains(&"Anthropic API key") {
                continue;
            }
            kinds.push(*kind);
        }
    }
    kinds
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_pattern_compiles() {
        assert_eq!(compiled().len(), PATTERNS.len());
    }

    #[test]
    fn finds_keys_blocks_tokens_and_assignments() {
        assert_eq!(scan("use sk-proj-abcdefghijklmnopqrstuvwxyz123456 here"), vec!["OpenAI-style API key"]);
        assert_eq!(scan("sk-ant-api03-abcdefghijklmnopqrstuvwxyz"), vec!["Anthropic API key"]);
        assert_eq!(scan("-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbn..."), vec!["private key block"]);
        assert_eq!(scan("AKIAIOSFODNN7EXAMPLE"), vec!["AWS access key id"]);
        assert_eq!(scan("Authorization: Bearer abcdefghijklmnop0123"), vec!["bearer token"]);
        assert_eq!(scan("DB_PASSWORD=hunter2hunter2\n"), vec!["secret assignment"]);
        assert_eq!(scan("  export STRIPE_SECRET=\"rk_live_0123456789\""), vec!["secret assignment"]);
    }

    #[test]
    fn passes_ordinary_text() {
        for text in [
            "the sk- prefix marks keys",
            "API_KEY=$API_KEY",
            "fn risk_assessment() -> Result<()>",
            "let token_count = tokens(chars);",
            "-----BEGIN PUBLIC KEY-----",
        ] {
            assert!(scan(text).is_empty(), "{text}: {:?}", scan(text));
        }
    }
}
