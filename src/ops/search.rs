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
    /// What every stored line holding a match must contain, looked for in its bytes.
    stored: Option<Stored>,
    /// Every event searched is a hit, on its first line ([`Pattern::anything`]).
    anything: bool,
}

/// How a stored line that cannot hold a match is known without parsing it. A stored line
/// is the event as serde_json writes it: text as it reads, except `"`, `\` and control
/// characters, which are escaped.
enum Stored {
    /// The pattern's literal (or the literals every match starts with), spelled as stored.
    Literals(aho_corasick::AhoCorasick),
    /// The pattern widened to stored bytes (see [`widened`]): it matches a stored line
    /// wherever the pattern matches the line's decoded text, and maybe elsewhere. `newline`:
    /// the pattern can match a line break, so a match may run from one of a tool call's
    /// argument values into the next (joined by one in its text, not in its stored line).
    Regex { regex: regex::bytes::Regex, newline: bool },
}

impl Stored {
    /// Whether a stored line of this shape can be skipped when this finds nothing in it.
    fn filters(&self, shape: &Shape) -> bool {
        !matches!((self, shape), (Stored::Regex { newline: true, .. }, Shape::ToolCall { .. }))
    }

    /// Where the first match at or after `at` starts.
    fn find_at(&self, haystack: &[u8], at: usize) -> Option<usize> {
        match self {
            Stored::Literals(ac) => ac.find(aho_corasick::Input::new(haystack).range(at..)).map(|m| m.start()),
            Stored::Regex { regex, .. } => regex.find_at(haystack, at).map(|m| m.start()),
        }
    }
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
        // Under -i, `k` and `s` also match the Kelvin sign and the long s, which an ASCII
        // case-insensitive literal search would not find.
        let folds = |l: &str| l.is_ascii() && !l.contains(['k', 'K', 's', 'S']);
        let stored = match literal.filter(|l| !l.is_empty() && !escaped(l) && (!ignore_case || folds(l))) {
            Some(l) => aho_corasick::AhoCorasick::builder()
                .ascii_case_insensitive(ignore_case)
                .build([l])
                .ok()
                .map(Stored::Literals),
            // Anything else: the pattern widened to stored bytes, else the literals every
            // match starts with, when there are a few and none is spelled differently.
            None => stored_regex(&source, ignore_case).or_else(|| {
                prefixes(&source, ignore_case)
                    .filter(|ls| ls.iter().all(|l| !escaped(l)))
                    .and_then(|ls| aho_corasick::AhoCorasick::new(ls).ok())
                    .map(Stored::Literals)
            }),
        };
        Ok(Pattern { regex, stored, anything: false })
    }

    /// Whether `text` (a title, not a stored line) holds a match.
    pub fn is_match(&self, text: &str) -> bool {
        self.anything || self.regex.is_match(text)
    }

    /// A pattern every event with text matches once, on its first line, nothing marked:
    /// what `grep --failed` without a pattern looks for (a filter chooses the events).
    pub fn anything() -> Pattern {
        Pattern { regex: regex::Regex::new("$^").expect("a valid regex"), stored: None, anything: true }
    }
}

/// [`widened`] `source`, compiled for stored bytes; `None` when it cannot be (or would match
/// nearly everything, and so skip nothing).
fn stored_regex(source: &str, ignore_case: bool) -> Option<Stored> {
    let hir =
        regex_syntax::ParserBuilder::new().case_insensitive(ignore_case).multi_line(true).build().parse(source).ok()?;
    let wide = widened(&hir)?;
    // A pattern that can match nothing at all (or only where a look-around held) would
    // match every line once widened: no use as a filter.
    if wide.properties().minimum_len().unwrap_or(0) == 0 {
        return None;
    }
    let regex = regex::bytes::RegexBuilder::new(&wide.to_string()).size_limit(1 << 22).build().ok()?;
    Some(Stored::Regex { regex, newline: matches_newline(&hir) })
}

/// Whether `hir` can match a line break (a literal or class that holds one).
fn matches_newline(hir: &regex_syntax::hir::Hir) -> bool {
    use regex_syntax::hir::{Class, HirKind};
    match hir.kind() {
        HirKind::Empty | HirKind::Look(_) => false,
        HirKind::Literal(literal) => literal.0.contains(&b'\n'),
        HirKind::Class(Class::Unicode(class)) => class.ranges().iter().any(|r| (r.start()..=r.end()).contains(&'\n')),
        HirKind::Class(Class::Bytes(class)) => class.ranges().iter().any(|r| (r.start()..=r.end()).contains(&b'\n')),
        HirKind::Repetition(rep) => matches_newline(&rep.sub),
        HirKind::Capture(capture) => matches_newline(&capture.sub),
        HirKind::Concat(subs) | HirKind::Alternation(subs) => subs.iter().any(matches_newline),
    }
}

/// A pattern for stored lines that matches wherever `hir` matches the decoded text: each
/// character `"`, `\` or control character the pattern could match may be stored as a JSON
/// escape, so a class or literal that holds one also takes the escapes; an assertion (`^`,
/// `\b`, ...) may not hold in the stored line where it held in the text (a decoded newline is
/// stored as `\n`), so it is dropped. `None`: something this cannot widen (byte classes).
fn widened(hir: &regex_syntax::hir::Hir) -> Option<regex_syntax::hir::Hir> {
    use regex_syntax::hir::{Class, ClassUnicode, ClassUnicodeRange, Hir, HirKind, Repetition};
    let escapable = || {
        ClassUnicode::new([
            ClassUnicodeRange::new('\0', '\x1f'),
            ClassUnicodeRange::new('"', '"'),
            ClassUnicodeRange::new('\\', '\\'),
        ])
    };
    // Any escape serde_json writes (or another writer could): \" \\ \/ \b \f \n \r \t \uXXXX.
    let escape = || {
        let simple = Hir::class(Class::Unicode(ClassUnicode::new(
            ['"', '\\', '/', 'b', 'f', 'n', 'r', 't'].map(|c| ClassUnicodeRange::new(c, c)),
        )));
        let hex = Hir::class(Class::Unicode(ClassUnicode::new([
            ClassUnicodeRange::new('0', '9'),
            ClassUnicodeRange::new('A', 'F'),
            ClassUnicodeRange::new('a', 'f'),
        ])));
        let unicode = Hir::concat(vec![
            Hir::literal(*b"u"),
            Hir::repetition(Repetition { min: 4, max: Some(4), greedy: true, sub: Box::new(hex) }),
        ]);
        Hir::concat(vec![Hir::literal(*b"\\"), Hir::alternation(vec![simple, unicode])])
    };
    Some(match hir.kind() {
        HirKind::Empty | HirKind::Look(_) => Hir::empty(),
        HirKind::Literal(literal) => {
            let text = std::str::from_utf8(&literal.0).ok()?;
            let mut parts = Vec::new();
            for c in text.chars() {
                if escapable().ranges().iter().any(|r| (r.start()..=r.end()).contains(&c)) {
                    parts.push(escape());
                } else {
                    parts.push(Hir::literal(c.to_string().into_bytes()));
                }
            }
            Hir::concat(parts)
        }
        HirKind::Class(Class::Unicode(class)) => {
            let mut plain = class.clone();
            plain.difference(&escapable());
            if plain.ranges().len() == class.ranges().len()
                && plain.ranges().iter().zip(class.ranges()).all(|(a, b)| a == b)
            {
                Hir::class(Class::Unicode(plain))
            } else {
                Hir::alternation(vec![Hir::class(Class::Unicode(plain)), escape()])
            }
        }
        HirKind::Class(Class::Bytes(_)) => return None,
        HirKind::Repetition(rep) => Hir::repetition(Repetition { sub: Box::new(widened(&rep.sub)?), ..rep.clone() }),
        HirKind::Capture(capture) => widened(&capture.sub)?,
        HirKind::Concat(subs) => Hir::concat(subs.iter().map(widened).collect::<Option<_>>()?),
        HirKind::Alternation(subs) => Hir::alternation(subs.iter().map(widened).collect::<Option<_>>()?),
    })
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
    /// Only tool results that report an error (`is_error`).
    pub failed: bool,
    /// Only events recorded by a person it matches.
    pub author: Option<crate::event::who::Author>,
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
    /// Not a hit: an event shown around one ([`Mode::Around`]), `line` its first line.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub context: bool,
    /// With [`Mode::Around`], the event's place among the conversation's events with text:
    /// where two shown events are not next to each other, something was left out between.
    #[serde(skip)]
    pub at: usize,
}

/// What a search collects: a count asks for no hit to be built, which for a common
/// pattern is most of a search's allocations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Hits, with their lines and matches: at most this many from one conversation.
    Hits(usize),
    /// How many hits, and nothing else.
    Count,
    /// Whether there is one: the search of a conversation stops at its first.
    Any,
    /// Every hit, and the events with text around each (as grep's `-B`, `-A`): `before`
    /// and `after` events, in order, a hit's event shown once.
    Around { before: usize, after: usize },
}

/// What a search of one conversation found: `count` hits (in [`Mode::Hits`], `hits` holds
/// them; otherwise it is empty).
#[derive(Debug, Default)]
pub struct Found {
    pub hits: Vec<Hit>,
    pub count: usize,
}

impl Found {
    fn add(&mut self, pattern: &Pattern, text: &str, at: &Source, mode: Mode) {
        match mode {
            Mode::Hits(_) | Mode::Around { .. } => {
                let hits = matches_in(pattern, text, at);
                self.count += hits.len();
                self.hits.extend(hits);
            }
            Mode::Count => self.count += count_in(pattern, text, false),
            Mode::Any => self.count += count_in(pattern, text, true),
        }
    }

    fn done(&mut self, mode: Mode) -> bool {
        match mode {
            Mode::Any => self.count > 0,
            Mode::Hits(at_most) if self.count >= at_most => {
                self.hits.truncate(at_most);
                self.count = at_most;
                true
            }
            _ => false,
        }
    }
}

/// Every hit in conversation `id`, in order, as `mode` asks.
pub fn search(store: &Store, id: &str, pattern: &Pattern, filter: &Filter, mode: Mode) -> Result<Found> {
    let mut found = if filter.compacted {
        search_view(store, id, pattern, filter, mode)?
    } else {
        search_raw(store, id, pattern, filter, mode)?
    };
    if let Mode::Around { before, after } = mode
        && !found.hits.is_empty()
    {
        found.hits = with_context(store, id, filter.compacted, std::mem::take(&mut found.hits), before, after)?;
    }
    Ok(found)
}

/// `hits` (in order) with the events around them: `before` and `after` events with text
/// around each hit's event, whatever the filter (as grep's context is whatever lines are
/// there), in the view searched. Only a conversation with a hit is read whole for this.
fn with_context(
    store: &Store,
    id: &str,
    compacted: bool,
    hits: Vec<Hit>,
    before: usize,
    after: usize,
) -> Result<Vec<Hit>> {
    let events = store.events(id)?;
    let tools: HashMap<String, String> = events
        .iter()
        .filter_map(|e| match &e.kind {
            Kind::ToolCall { call_id, name, .. } => Some((call_id.clone(), name.clone())),
            _ => None,
        })
        .collect();
    let (shown, turns): (Vec<Event>, Vec<Option<u64>>) = if compacted {
        projection::project(&events)?.into_iter().map(|p| (p.event, p.raw_turn)).unzip()
    } else {
        let turns = event::turn_numbers(&events);
        (events, turns)
    };
    let texts: Vec<(usize, String)> =
        shown.iter().enumerate().filter_map(|(i, e)| searched_text(e).map(|t| (i, t))).collect();
    let place: HashMap<&str, usize> = texts.iter().enumerate().map(|(n, (i, _))| (shown[*i].id.as_str(), n)).collect();
    let mut wanted = vec![false; texts.len()];
    for hit in &hits {
        if let Some(&n) = place.get(hit.event.as_str()) {
            let last = (n + after).min(texts.len() - 1);
            wanted[n.saturating_sub(before)..=last].iter_mut().for_each(|w| *w = true);
        }
    }
    let mut hits = hits.into_iter().peekable();
    let mut out = Vec::new();
    for (n, (i, text)) in texts.iter().enumerate() {
        if !wanted[n] {
            continue;
        }
        let mut hit_here = false;
        while let Some(hit) = hits.next_if(|h| place.get(h.event.as_str()) == Some(&n)) {
            out.push(Hit { at: n, ..hit });
            hit_here = true;
        }
        if !hit_here {
            let event = &shown[*i];
            let tool = match &event.kind {
                Kind::ToolCall { name, .. } => Some(name.as_str()),
                Kind::ToolResult { call_id, .. } => tools.get(call_id).map(String::as_str),
                _ => None,
            };
            let at = Source { id: &event.id, kind: event.kind.type_name(), ts: &event.ts, turn: turns[*i], tool };
            let line = first_line(text).len();
            out.push(Hit { context: true, at: n, ..hit(&at, text, (0, line, Vec::new())) });
        }
    }
    // A hit on an event the view does not hold (none should be) is kept, after the rest.
    out.extend(hits);
    Ok(out)
}

/// [`search`] of the raw events.
fn search_raw(store: &Store, id: &str, pattern: &Pattern, filter: &Filter, mode: Mode) -> Result<Found> {
    let at = store.outlined(id)?;
    let outlines = &at.outlined.outlines;
    let mut reader = store.segment_reader();
    let mut found = Found::default();
    let (mut index, mut turn) = (0usize, None::<u64>);
    let mut tools: HashMap<&str, &str> = HashMap::new();
    for (path, blob, count) in &at.segments {
        let bytes = reader.read(*blob)?;
        // A segment with `\u` or `\/` escapes was not written by serde_json: its bytes may
        // spell the text differently, so every line of it is parsed.
        let escapes = memchr::memmem::find(&bytes, b"\\u").is_some() || memchr::memmem::find(&bytes, b"\\/").is_some();
        let mut lines = bytes.split(|b| *b == b'\n');
        let (mut offset, mut next_match) = (0usize, None::<usize>);
        for _ in 0..*count {
            let line = lines.next().unwrap_or_default();
            let (start, end) = (offset, offset + line.len());
            offset = end + 1;
            let outline = &outlines[index];
            index += 1;
            if outline.starts_turn() {
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
            let is_error = matches!(outline.shape, Shape::ToolResult { is_error: true, .. });
            if !filter.wants(kind_name(&outline.shape), tool, &outline.ts, is_error) {
                continue;
            }
            // Outlines hold no person: the line's fields are read for it.
            if let Some(author) = &filter.author {
                let fields: Option<serde_json::Map<String, serde_json::Value>> = serde_json::from_slice(line).ok();
                if !fields.is_some_and(|f| author.matches_extra(&f)) {
                    continue;
                }
            }
            if let Some(stored) = &pattern.stored
                && !escapes
                && stored.filters(&outline.shape)
            {
                // The segment is searched whole, a match at a time (as rg does): the next
                // match found stands for every line before it.
                let next = match next_match {
                    Some(at) if at >= start => at,
                    _ => stored.find_at(&bytes, start).unwrap_or(usize::MAX),
                };
                next_match = Some(next);
                if next >= end {
                    continue;
                }
            }
            // Only the searched field is decoded: the line was checked when it was
            // outlined, and a full parse allocating every field was most of a search.
            // (A line only the full parse takes, one with a repeated key say, is parsed so.)
            let text = std::str::from_utf8(line)
                .ok()
                .and_then(|l| {
                    stored_text(l, &outline.shape).or_else(|| {
                        let event = event::parse_stored(&format!("{l}\n")).ok()?.pop()?;
                        Some(searched_text(&event).map(std::borrow::Cow::Owned))
                    })
                })
                .ok_or_else(|| {
                    super::OpsError::Invalid(format!("{path}: event {} is not a stored event", outline.id))
                })?;
            let Some(text) = text else { continue };
            let at = Source { id: &outline.id, kind: kind_name(&outline.shape), ts: &outline.ts, turn, tool };
            found.add(pattern, &text, &at, mode);
            if found.done(mode) {
                return Ok(found);
            }
        }
    }
    Ok(found)
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
    mode: Mode,
    sink: &mut dyn FnMut(usize, Found) -> Result<bool>,
) -> Result<()> {
    let workers = WORKERS.min(ids.len()).max(1);
    std::thread::scope(|scope| {
        let mut queues = Vec::new();
        for worker in 0..workers {
            let (send, queue) = std::sync::mpsc::sync_channel::<Result<Found>>(16);
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
                    if send.send(search(&store, id, pattern, filter, mode)).is_err() {
                        return;
                    }
                }
            });
        }
        for n in 0..ids.len() {
            let found = queues[n % workers]
                .recv()
                .map_err(|_| super::OpsError::Invalid("a searching thread stopped early".into()))??;
            if !sink(n, found)? {
                break;
            }
        }
        // Dropping the queues stops the workers at their next send.
        drop(queues);
        Ok(())
    })
}

/// [`search`] of the projected view.
fn search_view(store: &Store, id: &str, pattern: &Pattern, filter: &Filter, mode: Mode) -> Result<Found> {
    let events = store.events(id)?;
    let view = projection::project(&events)?;
    let mut tools: HashMap<String, String> = HashMap::new();
    for e in &events {
        if let Kind::ToolCall { call_id, name, .. } = &e.kind {
            tools.insert(call_id.clone(), name.clone());
        }
    }
    let mut found = Found::default();
    for p in &view {
        let tool = match &p.event.kind {
            Kind::ToolCall { name, .. } => Some(name.as_str()),
            Kind::ToolResult { call_id, .. } => tools.get(call_id).map(String::as_str),
            _ => None,
        };
        let is_error = matches!(p.event.kind, Kind::ToolResult { is_error: true, .. });
        if !filter.wants(p.event.kind.type_name(), tool, &p.event.ts, is_error)
            || filter.author.as_ref().is_some_and(|a| !a.matches_event(&p.event))
        {
            continue;
        }
        let Some(text) = searched_text(&p.event) else { continue };
        let at = Source { id: &p.event.id, kind: p.event.kind.type_name(), ts: &p.event.ts, turn: p.raw_turn, tool };
        found.add(pattern, &text, &at, mode);
        if found.done(mode) {
            break;
        }
    }
    Ok(found)
}

impl Filter {
    fn wants(&self, kind: &str, tool: Option<&str>, ts: &str, is_error: bool) -> bool {
        if self.failed && !(kind == "tool_result" && is_error) {
            return false;
        }
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
/// without building the event, and borrowed from the line where it holds no escape.
fn stored_text<'a>(line: &'a str, shape: &Shape) -> Option<Option<std::borrow::Cow<'a, str>>> {
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
            Some(serde_json::from_str::<Content>(line).ok()?.content)
        }
        Shape::ToolCall { .. } => {
            let arguments = serde_json::from_str::<Arguments>(line).ok()?.arguments;
            let mut out = Vec::new();
            leaves(&arguments, &mut out);
            Some(std::borrow::Cow::Owned(out.join("\n")))
        }
        Shape::Config | Shape::Compaction | Shape::Other => None,
    })
}

/// The hits of `pattern` in a text: matches that start on the same line share a hit.
fn matches_in(pattern: &Pattern, text: &str, at: &Source) -> Vec<Hit> {
    if pattern.anything {
        return vec![hit(at, text, (0, first_line(text).len(), Vec::new()))];
    }
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

/// How many hits [`matches_in`] would make (at most one with `first`), without making them.
fn count_in(pattern: &Pattern, text: &str, first: bool) -> usize {
    if pattern.anything {
        return 1;
    }
    let (mut n, mut line) = (0, None);
    for m in pattern.regex.find_iter(text) {
        if m.start() == m.end() {
            continue;
        }
        let start = text[..m.start()].rfind('\n').map_or(0, |i| i + 1);
        if line != Some(start) {
            n += 1;
            line = Some(start);
            if first {
                break;
            }
        }
    }
    n
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
        context: false,
        at: 0,
    }
}

/// The first line of a text.
fn first_line(text: &str) -> &str {
    text.split('\n').next().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matches(pattern: &Pattern, event: &Event, turn: Option<u64>, tool: Option<&str>) -> Vec<Hit> {
        let Some(text) = searched_text(event) else { return Vec::new() };
        let at = Source { id: &event.id, kind: event.kind.type_name(), ts: &event.ts, turn, tool };
        matches_in(pattern, &text, &at)
    }

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
    fn literals_are_looked_for_as_literals_when_stored_alike() {
        let literal = |p: &Pattern| matches!(p.stored, Some(Stored::Literals(_)));
        assert!(literal(&Pattern::new("login bug", false, false, false).unwrap()));
        assert!(literal(&Pattern::new("a.b", true, false, false).unwrap()));
        assert!(literal(&Pattern::new("été", true, false, false).unwrap()));
        // Spelled differently when stored, or not a literal: the widened regex.
        for (pattern, fixed, ignore_case) in [
            ("say \"hi\"", true, false),
            ("Été", true, true),
            (r"fn [a-z_]+\(", false, false),
            (r"\w+ing", false, false),
        ] {
            let p = Pattern::new(pattern, fixed, ignore_case, false).unwrap();
            assert!(matches!(p.stored, Some(Stored::Regex { .. })), "{pattern}");
        }
        // One that matches the empty string filters nothing.
        assert!(Pattern::new(r"x*", false, false, false).unwrap().stored.is_none());
    }

    /// The filter may let through a stored line whose text has no match, but never skips
    /// one whose text has: checked for patterns that meet every escape serde_json writes,
    /// assertions that hold in the text and not in the stored line, and case folding.
    #[test]
    fn the_stored_filter_never_skips_a_line_whose_text_matches() {
        let texts = [
            "say \"hi\" to him",
            "back\\slash and C:\\dir",
            "line one\nline two",
            "tab\there",
            "bell\u{7} and nul\u{0}",
            "Été à Paris",
            "fn main() {}\nfn run_it(x)",
            "ÄB ab",
            "word\nnext",
            "a/b",
        ];
        let patterns = [
            ("say \"hi\"", true, false, false),
            (r#"say "hi""#, false, false, false),
            (r"\\slash", false, false, false),
            (r"C:\\", false, false, false),
            (r"one\nline", false, false, false),
            (r"(?s)one.line", false, false, false),
            (r"^line", false, false, false),
            (r"two$", false, false, false),
            (r"\bnext", false, false, false),
            ("next", false, false, true),
            (r"[^a-z ]+", false, false, false),
            (r"tab.here", false, false, false),
            (r"bell\x07", false, false, false),
            (r"nul\x00", false, false, false),
            ("été", false, true, false),
            ("ä", false, true, false),
            (r"fn [a-z_]+\(", false, false, false),
            (r"\w+ing|a/b", false, false, false),
        ];
        // Each text as a message, and as a tool call's argument values (joined by line
        // breaks in the text a call is searched by, not in its stored line).
        let mut lines: Vec<(String, String, Shape)> = texts
            .iter()
            .map(|text| {
                let line = serde_json::to_string(&serde_json::json!({"type": "user", "content": text})).unwrap();
                (line, text.to_string(), Shape::User)
            })
            .collect();
        for (a, b) in [("foo", "bar"), ("line one", "line two"), ("say \"hi\"", "to him")] {
            let line = serde_json::to_string(&serde_json::json!({
                "type": "tool_call", "name": "t", "call_id": "c", "arguments": {"a": a, "b": [b, 3]}
            }))
            .unwrap();
            let shape = Shape::ToolCall { call_id: "c".into(), name: "t".into() };
            let text = stored_text(&line, &shape).unwrap().unwrap().into_owned();
            assert_eq!(text, format!("{a}\n{b}\n3"));
            lines.push((line, text, shape));
        }
        let patterns = [
            patterns.as_slice(),
            &[
                (r"foo\nbar", false, false, false),
                (r"foo\s+bar", false, false, false),
                (r"(?s)foo.bar", false, false, false),
                (r"one$", false, false, false),
                ("ask", true, true, false),
                ("SK", false, true, false),
            ],
        ]
        .concat();
        let texts = ["aſk", "asK"];
        lines.extend(texts.iter().map(|text| {
            let line = serde_json::to_string(&serde_json::json!({"type": "user", "content": text})).unwrap();
            (line, text.to_string(), Shape::User)
        }));
        for (pattern, fixed, ignore_case, word) in patterns {
            let p = Pattern::new(pattern, fixed, ignore_case, word).unwrap();
            let stored = p.stored.as_ref().unwrap_or_else(|| panic!("{pattern}: no stored filter"));
            for (line, text, shape) in &lines {
                if p.regex.is_match(text) {
                    let kept = !stored.filters(shape) || stored.find_at(line.as_bytes(), 0).is_some();
                    assert!(kept, "{pattern:?} skips {line}");
                }
            }
        }
        // Folded matches were found at all (so the loop above checked them).
        let p = Pattern::new("ask", true, true, false).unwrap();
        assert!(p.regex.is_match("aſk") && p.regex.is_match("asK"));
        // And it does skip: a line with `fn` but no call.
        let p = Pattern::new(r"fn [a-z_]+\(", false, false, false).unwrap();
        assert_eq!(p.stored.unwrap().find_at(br#"{"content":"fn <T> and fn x"}"#, 0), None);
    }

    #[test]
    fn words_and_case() {
        let event = user("Login, relogin, LOGIN");
        let p = Pattern::new("login", false, true, true).unwrap();
        assert_eq!(matches(&p, &event, None, None)[0].matches, [(0, 5), (16, 21)]);
    }
}
