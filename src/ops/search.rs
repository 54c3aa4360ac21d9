//! `grep`: find text in conversations. What is searched is each event's decoded text (a
//! message's content, a result's output, a call's argument values), never the JSON that
//! stores it: `"` and a phrase that spans lines match as they read.
//!
//! The raw view is searched from the stored lines: the outline index says each event's
//! type, turn, time and tool without parsing it, and when the pattern is a literal, a
//! line whose stored bytes cannot hold it (the literal spelled as serde_json writes it) is
//! never parsed. `--compacted` searches the projected view, from every event.

use std::collections::HashMap;

use chrono::{DateTime, FixedOffset, Utc};
use serde_json::Value;

use crate::event::{self, Event, Kind, Shape};
use crate::projection;
use crate::store::Store;

use super::Result;

/// What to look for.
pub struct Pattern {
    regex: regex::Regex,
    /// The pattern as it appears in a stored line, when every match must contain it.
    stored: Option<aho_corasick::AhoCorasick>,
}

impl Pattern {
    /// `pattern` as a regular expression (Rust's `regex` syntax), or with `fixed` as the
    /// text itself; `ignore_case`, `word`: as grep's `-i`, `-w`.
    pub fn new(pattern: &str, fixed: bool, ignore_case: bool, word: bool) -> std::result::Result<Pattern, String> {
        let literal = if fixed { Some(pattern.to_owned()) } else { plain(pattern) };
        let source = if fixed { regex::escape(pattern) } else { pattern.to_owned() };
        let source = if word { format!(r"\b(?:{source})\b") } else { source };
        let regex = regex::RegexBuilder::new(&source)
            .case_insensitive(ignore_case)
            .multi_line(true)
            .build()
            .map_err(|e| e.to_string())?;
        // serde_json writes these escaped; any other character (non-ASCII included) as it is.
        let escaped = |s: &str| s.chars().any(|c| c == '"' || c == '\\' || (c as u32) < 0x20);
        let stored = match literal.filter(|l| !l.is_empty() && !escaped(l) && (!ignore_case || l.is_ascii())) {
            Some(l) => aho_corasick::AhoCorasick::builder().ascii_case_insensitive(ignore_case).build([l]).ok(),
            // A regex: the literals every match starts with, when there are a few and none
            // would be spelled differently in a stored line.
            None if !fixed => prefixes(&source, ignore_case)
                .filter(|ls| ls.iter().all(|l| !escaped(l)))
                .and_then(|ls| aho_corasick::AhoCorasick::new(ls).ok()),
            None => None,
        };
        Ok(Pattern { regex, stored })
    }
}

/// Literals one of which every match of `source` starts with (case variants included with
/// `ignore_case`); `None` when there is no such finite set of non-empty ones.
fn prefixes(source: &str, ignore_case: bool) -> Option<Vec<String>> {
    let hir = regex_syntax::ParserBuilder::new().case_insensitive(ignore_case).build().parse(source).ok()?;
    let seq = regex_syntax::hir::literal::Extractor::new().extract(&hir);
    let literals = seq.literals()?;
    if literals.is_empty() || literals.len() > 64 {
        return None;
    }
    literals
        .iter()
        .map(|l| std::str::from_utf8(l.as_bytes()).ok().filter(|s| !s.is_empty()).map(str::to_owned))
        .collect()
}

/// `pattern` read as a regex, when it matches only itself: then it is its own literal.
fn plain(pattern: &str) -> Option<String> {
    (regex::escape(pattern) == pattern).then(|| pattern.to_owned())
}

/// A time bound as people write it: a time ago (`2h`, `3days`), a date (midnight UTC) or an
/// RFC 3339 time; `Err`: why not.
pub fn parse_when(text: &str, now: DateTime<Utc>) -> std::result::Result<DateTime<Utc>, String> {
    if let Ok(ago) = humantime::parse_duration(text) {
        return chrono::Duration::from_std(ago)
            .ok()
            .and_then(|d| now.checked_sub_signed(d))
            .ok_or_else(|| "too long ago".to_owned());
    }
    if let Ok(at) = DateTime::parse_from_rfc3339(text) {
        return Ok(at.with_timezone(&Utc));
    }
    if let Ok(day) = chrono::NaiveDate::parse_from_str(text, "%Y-%m-%d") {
        return Ok(day.and_hms_opt(0, 0, 0).unwrap_or_default().and_utc());
    }
    Err("not a time ago, a date or an RFC 3339 time".to_owned())
}

/// Which events to search.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    /// Event types (`user`, `tool_result`, ...); empty: every type with text.
    pub types: Vec<String>,
    /// Only calls of this tool and their results.
    pub tool: Option<String>,
    pub since: Option<DateTime<Utc>>,
    pub until: Option<DateTime<Utc>>,
    /// Search the projected view instead of the raw events.
    pub compacted: bool,
}

/// One line (or run of lines) of an event's text that matches.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Hit {
    pub event: String,
    pub turn: Option<u64>,
    #[serde(rename = "type")]
    pub kind: String,
    pub tool: Option<String>,
    pub ts: String,
    /// The text from the start of the line the match starts on to the end of the line it
    /// ends on.
    pub line: String,
    /// Byte ranges of the matches in `line`.
    pub matches: Vec<(usize, usize)>,
}

/// Every hit in conversation `id`, in order.
pub fn search(store: &Store, id: &str, pattern: &Pattern, filter: &Filter) -> Result<Vec<Hit>> {
    if filter.compacted {
        return search_view(store, id, pattern, filter);
    }
    let at = store.outlined(id)?;
    let outlines = &at.outlined.outlines;
    let mut reader = store.segment_reader();
    let mut hits = Vec::new();
    let (mut index, mut turn) = (0usize, None::<u64>);
    let mut tools: HashMap<&str, &str> = HashMap::new();
    for (path, blob, count) in &at.segments {
        let bytes = reader.read(*blob)?;
        // A segment with `\u` escapes was not written by serde_json: its bytes may spell
        // the literal differently, so every line of it is parsed.
        let escapes = memchr::memmem::find(&bytes, b"\\u").is_some();
        let mut lines = bytes.split(|b| *b == b'\n');
        for _ in 0..*count {
            let line = lines.next().unwrap_or_default();
            let outline = &outlines[index];
            index += 1;
            if outline.is_user() {
                turn = Some(turn.map_or(0, |t| t + 1));
            }
            let tool = match &outline.shape {
                Shape::ToolCall { call_id, name } => {
                    tools.insert(call_id, name);
                    Some(name.as_str())
                }
                Shape::ToolResult { call_id, .. } => tools.get(call_id.as_str()).copied(),
                _ => None,
            };
            if !filter.wants(kind_name(&outline.shape), tool, &outline.ts) {
                continue;
            }
            if let Some(stored) = &pattern.stored
                && !escapes
                && !stored.is_match(line)
            {
                continue;
            }
            // Only the searched field is decoded: the line was checked when it was
            // outlined, and a full parse allocating every field was most of a search.
            // (A line only the full parse takes, one with a repeated key say, is parsed so.)
            let text = std::str::from_utf8(line)
                .ok()
                .and_then(|l| {
                    stored_text(l, &outline.shape).or_else(|| {
                        let event = event::parse_stored(&format!("{l}\n")).ok()?.pop()?;
                        Some(searched_text(&event))
                    })
                })
                .ok_or_else(|| {
                    super::OpsError::Invalid(format!("{path}: event {} is not a stored event", outline.id))
                })?;
            let Some(text) = text else { continue };
            let at = Source { id: &outline.id, kind: kind_name(&outline.shape), ts: &outline.ts, turn, tool };
            hits.extend(matches_in(pattern, &text, &at));
        }
    }
    Ok(hits)
}

/// Conversations searched at once by [`search_all`]: reading and inflating is most of a
/// search, and machines here have two cores.
const WORKERS: usize = 2;

/// [`search`] of every conversation in `ids`, several at a time, each with its own handle
/// on the store at `root` (gix's are not `Send`); `sink` is handed each conversation's hits
/// in the order of `ids`, and may stop the search by returning `false`. Memory: the hits of
/// a few conversations.
pub fn search_all(
    root: &std::path::Path,
    ids: &[String],
    pattern: &Pattern,
    filter: &Filter,
    sink: &mut dyn FnMut(usize, Vec<Hit>) -> Result<bool>,
) -> Result<()> {
    let workers = WORKERS.min(ids.len()).max(1);
    std::thread::scope(|scope| {
        let mut queues = Vec::new();
        for worker in 0..workers {
            let (send, queue) = std::sync::mpsc::sync_channel::<Result<Vec<Hit>>>(16);
            queues.push(queue);
            scope.spawn(move || {
                let store = match Store::open(root) {
                    Ok(store) => store,
                    Err(e) => {
                        let _ = send.send(Err(e.into()));
                        return;
                    }
                };
                for id in ids.iter().skip(worker).step_by(workers) {
                    // The reader went away (an error, a closed pipe): stop.
                    if send.send(search(&store, id, pattern, filter)).is_err() {
                        return;
                    }
                }
            });
        }
        for n in 0..ids.len() {
            let hits = queues[n % workers]
                .recv()
                .map_err(|_| super::OpsError::Invalid("a searching thread stopped early".into()))??;
            if !sink(n, hits)? {
                break;
            }
        }
        // Dropping the queues stops the workers at their next send.
        drop(queues);
        Ok(())
    })
}

/// [`search`] of the projected view.
fn search_view(store: &Store, id: &str, pattern: &Pattern, filter: &Filter) -> Result<Vec<Hit>> {
    let events = store.events(id)?;
    let view = projection::project(&events)?;
    let mut tools: HashMap<String, String> = HashMap::new();
    for e in &events {
        if let Kind::ToolCall { call_id, name, .. } = &e.kind {
            tools.insert(call_id.clone(), name.clone());
        }
    }
    let mut hits = Vec::new();
    for p in &view {
        let tool = match &p.event.kind {
            Kind::ToolCall { name, .. } => Some(name.as_str()),
            Kind::ToolResult { call_id, .. } => tools.get(call_id).map(String::as_str),
            _ => None,
        };
        if filter.wants(p.event.kind.type_name(), tool, &p.event.ts) {
            hits.extend(matches(pattern, &p.event, p.raw_turn, tool));
        }
    }
    Ok(hits)
}

impl Filter {
    fn wants(&self, kind: &str, tool: Option<&str>, ts: &str) -> bool {
        if !self.types.is_empty() && !self.types.iter().any(|t| t == kind) {
            return false;
        }
        if let Some(wanted) = &self.tool
            && tool != Some(wanted.as_str())
        {
            return false;
        }
        if self.since.is_some() || self.until.is_some() {
            let Ok(at) = DateTime::<FixedOffset>::parse_from_rfc3339(ts) else { return false };
            let at = at.with_timezone(&Utc);
            if self.since.is_some_and(|s| at < s) || self.until.is_some_and(|u| at > u) {
                return false;
            }
        }
        true
    }
}

fn kind_name(shape: &Shape) -> &'static str {
    match shape {
        Shape::System => "system",
        Shape::User => "user",
        Shape::Assistant => "assistant",
        Shape::Reasoning => "reasoning",
        Shape::ToolCall { .. } => "tool_call",
        Shape::ToolResult { .. } => "tool_result",
        Shape::Config => "config",
        Shape::Compaction => "compaction",
        Shape::Other => "other",
    }
}

/// The text an event is searched by: content as it reads; a call's argument values, one
/// per line (strings decoded, anything else as JSON).
pub fn searched_text(event: &Event) -> Option<String> {
    match &event.kind {
        Kind::System { content }
        | Kind::User { content }
        | Kind::Assistant { content }
        | Kind::Reasoning { content }
        | Kind::ToolResult { content, .. } => Some(content.clone()),
        Kind::ToolCall { arguments, .. } => {
            let mut out = Vec::new();
            leaves(arguments, &mut out);
            Some(out.join("\n"))
        }
        Kind::Config { .. } | Kind::Compaction | Kind::Other(_) => None,
    }
}

fn leaves(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(s) => out.push(s.clone()),
        Value::Array(items) => items.iter().for_each(|v| leaves(v, out)),
        Value::Object(map) => map.values().for_each(|v| leaves(v, out)),
        Value::Null => {}
        other => out.push(other.to_string()),
    }
}

/// Lines `start..end` of a text and the matches in them (relative to `start`).
type Run = (usize, usize, Vec<(usize, usize)>);

/// What a hit is in: the event and where it sits.
struct Source<'a> {
    id: &'a str,
    kind: &'a str,
    ts: &'a str,
    turn: Option<u64>,
    tool: Option<&'a str>,
}

/// The searched text of a stored line of the given shape (`Some(None)`: it has none), read
/// without building the event.
fn stored_text(line: &str, shape: &Shape) -> Option<Option<String>> {
    #[derive(serde::Deserialize)]
    struct Content<'a> {
        #[serde(borrow)]
        content: std::borrow::Cow<'a, str>,
    }
    #[derive(serde::Deserialize)]
    struct Arguments {
        #[serde(default)]
        arguments: Value,
    }
    Some(match shape {
        Shape::System | Shape::User | Shape::Assistant | Shape::Reasoning | Shape::ToolResult { .. } => {
            Some(serde_json::from_str::<Content>(line).ok()?.content.into_owned())
        }
        Shape::ToolCall { .. } => {
            let arguments = serde_json::from_str::<Arguments>(line).ok()?.arguments;
            let mut out = Vec::new();
            leaves(&arguments, &mut out);
            Some(out.join("\n"))
        }
        Shape::Config | Shape::Compaction | Shape::Other => None,
    })
}

/// The hits of `pattern` in one event: matches that start on the same line share a hit.
fn matches(pattern: &Pattern, event: &Event, turn: Option<u64>, tool: Option<&str>) -> Vec<Hit> {
    let Some(text) = searched_text(event) else { return Vec::new() };
    let at = Source { id: &event.id, kind: event.kind.type_name(), ts: &event.ts, turn, tool };
    matches_in(pattern, &text, &at)
}

fn matches_in(pattern: &Pattern, text: &str, at: &Source) -> Vec<Hit> {
    let mut hits: Vec<Hit> = Vec::new();
    let mut current: Option<Run> = None;
    for m in pattern.regex.find_iter(text) {
        if m.start() == m.end() {
            continue;
        }
        let start = text[..m.start()].rfind('\n').map_or(0, |i| i + 1);
        let end = text[m.end()..].find('\n').map_or(text.len(), |i| m.end() + i);
        match &mut current {
            Some((s, e, spans)) if *s == start => {
                *e = (*e).max(end);
                spans.push((m.start() - start, m.end() - start));
            }
            _ => {
                if let Some(done) = current.take() {
                    hits.push(hit(at, text, done));
                }
                current = Some((start, end, vec![(m.start() - start, m.end() - start)]));
            }
        }
    }
    if let Some(done) = current {
        hits.push(hit(at, text, done));
    }
    hits
}

fn hit(at: &Source, text: &str, (start, end, matches): Run) -> Hit {
    Hit {
        event: at.id.to_owned(),
        turn: at.turn,
        kind: at.kind.to_owned(),
        tool: at.tool.map(str::to_owned),
        ts: at.ts.to_owned(),
        line: text[start..end].to_owned(),
        matches,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user(content: &str) -> Event {
        Event {
            id: "e1".into(),
            ts: "2026-01-01T00:00:00Z".into(),
            kind: Kind::User { content: content.into() },
            extra: Default::default(),
        }
    }

    #[test]
    fn decoded_text_matches_quotes_and_phrases_across_lines() {
        let event = user("first line\nsay \"hi\" to\nthe world");
        let p = Pattern::new("\"hi\"", true, false, false).unwrap();
        let hits = matches(&p, &event, Some(0), None);
        assert_eq!(hits.len(), 1);
        assert_eq!(hits[0].line, "say \"hi\" to");
        assert_eq!(hits[0].matches, [(4, 8)]);
        let p = Pattern::new(r"to\nthe", false, false, false).unwrap();
        let hits = matches(&p, &event, Some(0), None);
        assert_eq!(hits[0].line, "say \"hi\" to\nthe world");
    }

    #[test]
    fn literals_are_looked_for_in_stored_bytes_only_when_stored_alike() {
        assert!(Pattern::new("login bug", false, false, false).unwrap().stored.is_some());
        // A regex: the literals its matches start with, when every match starts with one.
        assert!(Pattern::new(r"fn [a-z_]+\(", false, false, false).unwrap().stored.is_some());
        assert!(Pattern::new("(login|logout) failed", false, false, false).unwrap().stored.is_some());
        assert!(Pattern::new(r"\w+ing", false, false, false).unwrap().stored.is_none());
        assert!(Pattern::new(r"say \x22hi", false, false, false).unwrap().stored.is_none());
        assert!(Pattern::new("a.b", true, false, false).unwrap().stored.is_some());
        assert!(Pattern::new("say \"hi\"", true, false, false).unwrap().stored.is_none());
        assert!(Pattern::new("Été", true, true, false).unwrap().stored.is_none());
        assert!(Pattern::new("été", true, false, false).unwrap().stored.is_some());
    }

    #[test]
    fn words_and_case() {
        let event = user("Login, relogin, LOGIN");
        let p = Pattern::new("login", false, true, true).unwrap();
        assert_eq!(matches(&p, &event, None, None)[0].matches, [(0, 5), (16, 21)]);
    }
}
