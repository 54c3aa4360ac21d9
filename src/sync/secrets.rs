//! Secret-like strings in what a push would publish. The rules are gitleaks' default set
//! (`gitleaks.toml`, MIT, kept as data) plus convo's own (`convo-rules.toml`: looser provider
//! prefixes, bearer tokens, `PASSWORD=`/`*_SECRET_KEY=`/YAML/`.env` assignments anywhere in a
//! string, `scheme://user:pass@host`). Both are parsed at first use and matched as gitleaks
//! does: a rule runs only when one of its keywords occurs (case-insensitively) in the text,
//! its secret is the `secretGroup` (else the first non-empty group, else the whole match), a
//! secret at or below the rule's `entropy` is ignored, and allowlists (the global ones and the
//! rule's) drop documented non-secrets. Rules bound to file paths (`*.tf`, `*.php`) do not
//! apply to a store's files and are left out. Base64 runs and URL-encoded text are decoded
//! and scanned too. A finding names the rule, never the secret.

use std::sync::OnceLock;

use aho_corasick::AhoCorasick;
use regex::bytes::{Regex, RegexBuilder};
use serde::Deserialize;
use serde_json::Value;

const GITLEAKS: &str = include_str!("gitleaks.toml");
const CONVO: &str = include_str!("convo-rules.toml");

#[derive(Deserialize, Default)]
struct File {
    #[serde(default)]
    allowlist: Option<AllowlistData>,
    #[serde(default)]
    allowlists: Vec<AllowlistData>,
    #[serde(default)]
    rules: Vec<RuleData>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RuleData {
    id: String,
    regex: Option<String>,
    path: Option<String>,
    entropy: Option<f64>,
    #[serde(default)]
    keywords: Vec<String>,
    secret_group: Option<usize>,
    #[serde(default)]
    allowlists: Vec<AllowlistData>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct AllowlistData {
    condition: Option<String>,
    #[serde(default)]
    paths: Vec<String>,
    #[serde(default)]
    regexes: Vec<String>,
    regex_target: Option<String>,
    #[serde(default)]
    stopwords: Vec<String>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Target {
    Secret,
    Match,
    Line,
}

struct Allowlist {
    /// All of the criteria must hold (gitleaks' `condition = "AND"`), else any one.
    all: bool,
    regexes: Vec<Regex>,
    target: Target,
    /// Lowercase; a secret containing one is allowed.
    stopwords: Vec<String>,
}

struct Rule {
    id: String,
    source: String,
    regex: OnceLock<Option<Regex>>,
    entropy: Option<f64>,
    secret_group: Option<usize>,
    allowlists: Vec<Allowlist>,
    /// Rules named `generic*` also need a digit in the secret, as in gitleaks.
    generic: bool,
}

struct Rules {
    rules: Vec<Rule>,
    global: Vec<Allowlist>,
    /// Every keyword of every rule; `keyword_rule[i]` is the rule of pattern `i`.
    keywords: AhoCorasick,
    keyword_rule: Vec<usize>,
    /// Rules without keywords run on every text.
    always: Vec<usize>,
    /// Rules left out: bound to file paths, or with no regex (counted by the tests).
    #[cfg_attr(not(test), expect(dead_code))]
    skipped: usize,
}

/// Go's RE2 and Rust's `regex` share a syntax; matching bytes with Unicode off gives RE2's
/// ASCII `\w`, `\s`, `\b` (gitleaks' rules are written for them) and a smaller automaton.
fn compile(pattern: &str) -> Option<Regex> {
    RegexBuilder::new(&format!("(?-u){pattern}")).size_limit(64 << 20).build().ok()
}

fn allowlist(data: AllowlistData) -> Option<Allowlist> {
    let all = data.condition.as_deref().is_some_and(|c| c.eq_ignore_ascii_case("and"));
    // Paths never match a store's events: an allowlist that needs one never applies, and a
    // path-only one allows nothing here.
    if (all && !data.paths.is_empty()) || (data.regexes.is_empty() && data.stopwords.is_empty()) {
        return None;
    }
    let target = match data.regex_target.as_deref() {
        Some("match") => Target::Match,
        Some("line") => Target::Line,
        _ => Target::Secret,
    };
    Some(Allowlist {
        all,
        regexes: data.regexes.iter().filter_map(|r| compile(r)).collect(),
        target,
        stopwords: data.stopwords.iter().map(|s| s.to_lowercase()).collect(),
    })
}

fn load() -> Rules {
    let mut rules = Vec::new();
    let mut global = Vec::new();
    let mut skipped = 0;
    let mut patterns = Vec::new();
    let mut keyword_rule = Vec::new();
    let mut always = Vec::new();
    for text in [GITLEAKS, CONVO] {
        // Both files are constants covered by tests (`rule_counts`): they always parse.
        let file: File = toml::from_str(text).unwrap_or_default();
        global.extend(file.allowlist.into_iter().chain(file.allowlists).filter_map(allowlist));
        for r in file.rules {
            let Some(source) = r.regex.filter(|_| r.path.is_none()) else {
                skipped += 1;
                continue;
            };
            if r.keywords.is_empty() {
                always.push(rules.len());
            }
            for k in r.keywords {
                patterns.push(k);
                keyword_rule.push(rules.len());
            }
            rules.push(Rule {
                generic: r.id.starts_with("generic"),
                id: r.id,
                source,
                regex: OnceLock::new(),
                entropy: r.entropy.filter(|e| *e > 0.0),
                secret_group: r.secret_group.filter(|g| *g > 0),
                allowlists: r.allowlists.into_iter().filter_map(allowlist).collect(),
            });
        }
    }
    // Keywords are short literals: building cannot fail; if it did, every rule would run.
    let keywords = match AhoCorasick::builder().ascii_case_insensitive(true).build(&patterns) {
        Ok(ac) => ac,
        Err(_) => {
            always = (0..rules.len()).collect();
            AhoCorasick::new(Vec::<String>::new()).unwrap_or_else(|_| unreachable!("an empty automaton builds"))
        }
    };
    Rules { rules, global, keywords, keyword_rule, always, skipped }
}

fn rules() -> &'static Rules {
    static RULES: OnceLock<Rules> = OnceLock::new();
    RULES.get_or_init(load)
}

impl Rule {
    /// Compiled at first use: most rules never see their keyword.
    fn regex(&self) -> Option<&Regex> {
        self.regex.get_or_init(|| compile(&self.source)).as_ref()
    }
}

/// Shannon entropy, in bits per byte.
fn entropy(bytes: &[u8]) -> f64 {
    if bytes.is_empty() {
        return 0.0;
    }
    let mut counts = [0usize; 256];
    for b in bytes {
        counts[*b as usize] += 1;
    }
    let n = bytes.len() as f64;
    counts.iter().filter(|c| **c > 0).map(|c| *c as f64 / n).map(|p| -p * p.log2()).sum()
}

/// The line of `text` around `start..end`.
fn line_of(text: &[u8], start: usize, end: usize) -> &[u8] {
    let from = text[..start].iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
    let to = text[end..].iter().position(|b| *b == b'\n').map_or(text.len(), |i| end + i);
    &text[from..to]
}

impl Allowlist {
    fn allows(&self, secret: &[u8], matched: &[u8], line: &[u8]) -> bool {
        let target = match self.target {
            Target::Secret => secret,
            Target::Match => matched,
            Target::Line => line,
        };
        let regex = (!self.regexes.is_empty()).then(|| self.regexes.iter().any(|r| r.is_match(target)));
        let stopword = (!self.stopwords.is_empty()).then(|| {
            let lower = String::from_utf8_lossy(secret).to_lowercase();
            self.stopwords.iter().any(|s| lower.contains(s.as_str()))
        });
        let mut criteria = regex.into_iter().chain(stopword);
        if self.all { criteria.all(|c| c) } else { criteria.any(|c| c) }
    }
}

/// The ids of the rules that find a secret in `text` itself (no decoding), each once.
fn scan_plain(text: &[u8], out: &mut Vec<&'static str>) {
    let rules = rules();
    let mut candidates: Vec<usize> = rules.always.clone();
    for m in rules.keywords.find_overlapping_iter(text) {
        candidates.push(rules.keyword_rule[m.pattern().as_usize()]);
    }
    candidates.sort_unstable();
    candidates.dedup();
    for i in candidates {
        let rule = &rules.rules[i];
        if out.contains(&rule.id.as_str()) {
            continue;
        }
        let Some(regex) = rule.regex() else { continue };
        if regex.captures_iter(text).any(|caps| rule.secret(rules, text, &caps).is_some()) {
            out.push(rule.id.as_str());
        }
    }
}

/// The secrets themselves that the rules find in `text` (no decoding), for `redact`.
fn plain_secrets(text: &[u8], out: &mut Vec<String>) {
    let rules = rules();
    let mut candidates: Vec<usize> = rules.always.clone();
    for m in rules.keywords.find_overlapping_iter(text) {
        candidates.push(rules.keyword_rule[m.pattern().as_usize()]);
    }
    candidates.sort_unstable();
    candidates.dedup();
    for i in candidates {
        let rule = &rules.rules[i];
        let Some(regex) = rule.regex() else { continue };
        for caps in regex.captures_iter(text) {
            if let Some(secret) = rule.secret(rules, text, &caps) {
                let secret = String::from_utf8_lossy(secret).into_owned();
                if !out.contains(&secret) {
                    out.push(secret);
                }
            }
        }
    }
}

impl Rule {
    /// The secret of one match of the rule, if it is one, gitleaks' way.
    fn secret<'t>(&self, rules: &Rules, text: &'t [u8], caps: &regex::bytes::Captures<'t>) -> Option<&'t [u8]> {
        let whole = caps.get(0)?;
        let secret = match self.secret_group {
            Some(g) => caps.get(g),
            None => caps.iter().skip(1).flatten().find(|m| !m.is_empty()).or(Some(whole)),
        };
        let secret = secret?.as_bytes();
        if let Some(min) = self.entropy {
            if entropy(secret) <= min {
                return None;
            }
            if self.generic && !secret.iter().any(u8::is_ascii_digit) {
                return None;
            }
        }
        let line = line_of(text, whole.start(), whole.end());
        let allowed = rules.global.iter().chain(&self.allowlists).any(|a| a.allows(secret, whole.as_bytes(), line));
        (!allowed).then_some(secret)
    }
}

/// `%XX` escapes decoded, if `text` has any.
fn url_decoded(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let hex = |b: u8| (b as char).to_digit(16);
    let mut out = Vec::with_capacity(bytes.len());
    let mut decoded = false;
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let (Some(h), Some(l)) = (bytes.get(i + 1).and_then(|b| hex(*b)), bytes.get(i + 2).and_then(|b| hex(*b)))
        {
            out.push((h * 16 + l) as u8);
            decoded = true;
            i += 3;
            continue;
        }
        out.push(if bytes[i] == b'+' { b' ' } else { bytes[i] });
        i += 1;
    }
    if !decoded {
        return None;
    }
    String::from_utf8(out).ok()
}

/// Mostly printable text: what a base64 run decodes to when it hides a string.
fn printable(bytes: &[u8]) -> Option<String> {
    let text = std::str::from_utf8(bytes).ok()?;
    let total = text.chars().count();
    let control = text.chars().filter(|c| c.is_control() && !matches!(c, '\n' | '\r' | '\t')).count();
    (total > 0 && control * 10 <= total).then(|| text.to_owned())
}

/// The decoded text of each base64 run of at least 16 characters (standard or URL-safe
/// alphabet) that decodes to printable text.
fn base64_decoded(text: &str) -> Vec<String> {
    base64_runs(text).into_iter().map(|(_, decoded)| decoded).collect()
}

/// [`base64_decoded`], each with the run it was decoded from.
fn base64_runs(text: &str) -> Vec<(String, String)> {
    use base64::Engine;
    use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
    static RUN: OnceLock<Option<Regex>> = OnceLock::new();
    let Some(run) = RUN.get_or_init(|| compile(r"[A-Za-z0-9+/_-]{16,}={0,2}")) else { return Vec::new() };
    let config = GeneralPurposeConfig::new()
        .with_decode_padding_mode(DecodePaddingMode::Indifferent)
        .with_decode_allow_trailing_bits(true);
    let standard = GeneralPurpose::new(&base64::alphabet::STANDARD, config);
    let url_safe = GeneralPurpose::new(&base64::alphabet::URL_SAFE, config);
    let mut out = Vec::new();
    for m in run.find_iter(text.as_bytes()) {
        let candidate = m.as_bytes();
        let url = candidate.iter().any(|b| matches!(b, b'-' | b'_'));
        if url && candidate.iter().any(|b| matches!(b, b'+' | b'/')) {
            continue;
        }
        let engine = if url { &url_safe } else { &standard };
        // A run that is not a whole number of base64 quanta may carry a stray leading or
        // trailing character (`x` + base64); try it trimmed to the length that decodes.
        let trimmed = candidate.iter().rposition(|b| *b != b'=').map_or(candidate, |i| &candidate[..=i]);
        let usable = if trimmed.len() % 4 == 1 { &trimmed[..trimmed.len() - 1] } else { trimmed };
        if let Ok(bytes) = engine.decode(usable)
            && let Some(decoded) = printable(&bytes)
        {
            out.push((String::from_utf8_lossy(candidate).into_owned(), decoded));
        }
    }
    out
}

/// The kinds of secret found in `text`, each once: a rule id, with ` (base64)` or
/// ` (URL-encoded)` when it was found only after decoding.
pub fn scan(text: &str) -> Vec<String> {
    let mut plain = Vec::new();
    scan_plain(text.as_bytes(), &mut plain);
    let mut kinds: Vec<String> = plain.iter().map(|k| (*k).to_owned()).collect();
    let mut decoded_kind = |found: Vec<&'static str>, how: &str| {
        for k in found {
            let kind = format!("{k} ({how})");
            if !plain.contains(&k) && !kinds.contains(&kind) {
                kinds.push(kind);
            }
        }
    };
    if let Some(decoded) = url_decoded(text) {
        let mut found = Vec::new();
        scan_plain(decoded.as_bytes(), &mut found);
        decoded_kind(found, "URL-encoded");
    }
    for decoded in base64_decoded(text) {
        let mut found = Vec::new();
        scan_plain(decoded.as_bytes(), &mut found);
        // Base64 inside base64 (a data URL of an encoded config, say): one level more.
        for inner in base64_decoded(&decoded) {
            scan_plain(inner.as_bytes(), &mut found);
        }
        decoded_kind(found, "base64");
    }
    kinds
}

/// The text to replace so that [`scan`] finds nothing in `text`: each secret as it appears
/// (the rule's secret group), and for a secret found only after base64 decoding, the whole
/// base64 run. For `convo redact`, which replaces them and never shows them. (A secret found
/// only after URL decoding is not located; `redact` then says so.)
pub fn secret_texts(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    plain_secrets(text.as_bytes(), &mut out);
    for (run, decoded) in base64_runs(text) {
        let mut inner = Vec::new();
        plain_secrets(decoded.as_bytes(), &mut inner);
        if !inner.is_empty() && !out.contains(&run) {
            out.push(run);
        }
    }
    out
}

/// [`secret_texts`] of every string of a JSON value, walked as [`scan_json`] walks it. A
/// string under a key is scanned as `key: value`; a secret that then starts with the key is
/// cut to the part inside the value, which is what a replacement can find.
pub fn secret_texts_json(value: &Value, out: &mut Vec<String>) {
    fn walk(value: &Value, key: Option<&str>, depth: usize, out: &mut Vec<String>) {
        match value {
            Value::String(s) => {
                let inner = s.trim_start();
                if depth < 8
                    && (inner.starts_with('{') || inner.starts_with('['))
                    && let Ok(nested) = serde_json::from_str::<Value>(s)
                {
                    return walk(&nested, None, depth + 1, out);
                }
                let text = match key {
                    Some(k) => format!("{k}: {s}"),
                    None => s.clone(),
                };
                for found in secret_texts(&text) {
                    let found = match key {
                        Some(k) if !s.contains(&found) => {
                            found.strip_prefix(&format!("{k}: ")).unwrap_or(&found).to_owned()
                        }
                        _ => found,
                    };
                    if !found.is_empty() && !out.contains(&found) {
                        out.push(found);
                    }
                }
            }
            Value::Array(items) => items.iter().for_each(|v| walk(v, None, depth, out)),
            Value::Object(map) => {
                for (k, v) in map {
                    match v {
                        Value::String(_) => walk(v, Some(k), depth, out),
                        other => walk(other, None, depth, out),
                    }
                }
            }
            _ => {}
        }
    }
    walk(value, None, 0, out);
}

/// Scan every string of a JSON value: object keys and values, strings nested in arrays, and
/// strings that themselves hold JSON (tool arguments, results). A string under a key is
/// scanned as `key: value`, so an assignment split across the two (`{"api_key": "..."}`) is
/// seen whole. `found(path, kind)` gets the dotted path of the field.
pub fn scan_json(value: &Value, found: &mut dyn FnMut(&str, String)) {
    walk(value, &mut String::new(), None, 0, found);
}

fn walk(value: &Value, path: &mut String, key: Option<&str>, depth: usize, found: &mut dyn FnMut(&str, String)) {
    match value {
        Value::String(s) => {
            let text = match key {
                Some(k) => format!("{k}: {s}"),
                None => s.clone(),
            };
            let inner = s.trim_start();
            if depth < 8
                && (inner.starts_with('{') || inner.starts_with('['))
                && let Ok(nested) = serde_json::from_str::<Value>(s)
            {
                // JSON in a string (tool arguments): walked field by field instead.
                return walk(&nested, path, None, depth + 1, found);
            }
            for kind in scan(&text) {
                found(path, kind);
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                let len = path.len();
                push_path(path, &i.to_string());
                walk(item, path, None, depth, found);
                path.truncate(len);
            }
        }
        Value::Object(map) => {
            for (k, v) in map {
                let len = path.len();
                push_path(path, k);
                match v {
                    Value::String(_) => walk(v, path, Some(k), depth, found),
                    Value::Array(_) | Value::Object(_) => {
                        for kind in scan(k) {
                            found(path, kind);
                        }
                        walk(v, path, None, depth, found);
                    }
                    _ => {
                        for kind in scan(&format!("{k}: {v}")) {
                            found(path, kind);
                        }
                    }
                }
                path.truncate(len);
            }
        }
        _ => {}
    }
}

fn push_path(path: &mut String, part: &str) {
    if !path.is_empty() {
        path.push('.');
    }
    path.push_str(part);
}

#[cfg(test)]
mod tests;
