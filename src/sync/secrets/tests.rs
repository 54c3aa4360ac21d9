use super::*;

/// A deterministic fake secret: `len` characters of `alphabet`, high entropy, never a real key.
pub fn fake(alphabet: &str, len: usize, seed: u64) -> String {
    let chars: Vec<char> = alphabet.chars().collect();
    let mut x = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    (0..len)
        .map(|_| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            chars[((x >> 33) % chars.len() as u64) as usize]
        })
        .collect()
}

const ALNUM: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/// Every gitleaks rule with a regex and no path binding compiles with `regex`: a rule lost
/// to a syntax difference fails here instead of silently not scanning.
#[test]
fn rule_counts() {
    let rules = rules();
    let failed: Vec<&str> = rules.rules.iter().filter(|r| r.regex().is_none()).map(|r| r.id.as_str()).collect();
    assert!(failed.is_empty(), "rules that do not compile: {failed:?}");
    // 222 gitleaks rules: 217 compiled, 5 bound to file paths (.tf, .php, nuget.config, ...).
    assert_eq!((rules.rules.len(), rules.skipped), (217 + 7, 5));
}

#[test]
fn finds_each_kind() {
    let cases = [
        (format!("ghp_{}", fake(ALNUM, 36, 1)), "github-pat"),
        (format!("key AKIA{} here", fake("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16, 2)), "aws-access-token"),
        (format!("sk_live_{}", fake(ALNUM, 24, 3)), "stripe-access-token"),
        (format!("sk-ant-api03-{}", fake(ALNUM, 40, 4)), "anthropic-key-prefix"),
        (format!("use sk-proj-{} here", fake(ALNUM, 40, 5)), "openai-key-prefix"),
        ("-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbn...".to_owned(), "private-key-header"),
        (format!("curl -H 'Authorization: Bearer {}'", fake(ALNUM, 32, 6)), "bearer-token"),
        (format!("see .env:\nDB_PASSWORD={}\n", fake(ALNUM, 14, 7)), "password-assignment"),
        (format!("run it with  export STRIPE_SECRET_KEY=\"{}\" first", fake(ALNUM, 20, 8)), "secret-assignment"),
        (format!("config:\n  api_key: {}\n", fake(ALNUM, 24, 9)), "secret-assignment"),
        (format!("postgres://admin:{}@db.internal:5432/app", fake(ALNUM, 12, 10)), "url-credentials"),
    ];
    for (text, kind) in &cases {
        let found = scan(text);
        assert!(found.iter().any(|k| k == kind), "{kind} not found in {text:?}: {found:?}");
    }
}

#[test]
fn decodes_base64_and_url_encoding() {
    use base64::Engine;
    let token = format!("ghp_{}", fake(ALNUM, 36, 11));
    let b64 = base64::engine::general_purpose::STANDARD.encode(format!("token={token}"));
    assert!(scan(&format!("blob {b64} end")).contains(&"github-pat (base64)".to_owned()));
    let url = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(&token);
    assert_eq!(scan(&url), ["github-pat (base64)"]);
    let pass = fake(ALNUM, 12, 12);
    assert_eq!(scan(&format!("https%3A%2F%2Fbob%3A{pass}%40example.com")), ["url-credentials (URL-encoded)"]);
}

#[test]
fn walks_nested_json() {
    let token = format!("ghp_{}", fake(ALNUM, 36, 13));
    let args = serde_json::json!({"env": {"GH": token}}).to_string();
    let event = serde_json::json!({"id": "E1", "type": "tool_call", "arguments": args, "x_unknown": ["a", {"password": "Zq8!x7Lp2w"}]});
    let mut found = Vec::new();
    scan_json(&event, &mut |path, kind| found.push(format!("{path}: {kind}")));
    assert_eq!(found, ["arguments.env.GH: github-pat", "x_unknown.1.password: password-assignment"]);
}

#[test]
fn passes_ordinary_text_and_placeholders() {
    for text in [
        "the sk- prefix marks keys",
        "API_KEY=$API_KEY",
        "API_KEY=${API_KEY}",
        "api_key: <your-key>",
        "OPENAI_API_KEY=sk-xxxxxxxxxxxxxxxxxxxxxxxx",
        "password: changeme",
        "PASSWORD=********",
        "postgres://user:password@localhost/db",
        "postgres://user:${DB_PASS}@localhost/db",
        "fn risk_assessment() -> Result<()>",
        "let token_count = tokens(chars);",
        "let token = self.next_token()?;",
        "api_key = os.environ[\"OPENAI_API_KEY\"]",
        "password: String,",
        "max_tokens = 4096",
        "-----BEGIN PUBLIC KEY-----",
        "AKIAIOSFODNN7EXAMPLE",
        "git clone git@github.com:org/repo.git",
        "http://localhost:8080/path?x=1",
    ] {
        assert!(scan(text).is_empty(), "{text}: {:?}", scan(text));
    }
}

/// The example conversation and the shared corpus of real transcripts are ordinary text:
/// nothing in them may fire (false positives train users to reach for --allow-secrets).
#[test]
fn real_transcripts_are_clean() {
    let mut files = vec![std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/examples/login-bug.jsonl"))];
    let corpus = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus");
    let mut dirs = vec![corpus];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() { dirs.push(path) } else { files.push(path) }
        }
    }
    let mut hits = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap_or_default();
        for line in text.lines() {
            match serde_json::from_str::<Value>(line) {
                Ok(value) => {
                    scan_json(&value, &mut |path, kind| hits.push(format!("{}: {path}: {kind}", file.display())))
                }
                Err(_) => hits.extend(scan(line).into_iter().map(|k| format!("{}: {k}", file.display()))),
            }
        }
    }
    assert!(hits.is_empty(), "{hits:#?}");
}
