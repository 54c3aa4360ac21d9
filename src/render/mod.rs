//! Text forms of conversations, histories and listings for people and for scripts.
//!
//! Everything here writes to a `&mut dyn Write` it is given; whether colour is on is the
//! caller's decision, passed in as a [`Theme`]. No terminal detection, no environment.

pub mod compare;
pub mod fit;
pub mod pull;
pub mod search;
pub mod usage;

pub use fit::{ShortIds, fit};

use std::borrow::Cow;
use std::io::{self, Write};

use serde_json::Value;

use crate::event::{Event, Kind, turn_numbers};
use crate::event::{Outline, Shape};
use crate::projection::{self, Edit, Item, Origin, Projected};
use crate::store::{LogEntry, Problem, Summary};

/// ANSI styling, or none.
#[derive(Debug, Clone, Copy, Default)]
pub struct Theme {
    pub color: bool,
}

#[derive(Debug, Clone, Copy)]
enum Style {
    Bold,
    Dim,
    Yellow,
    Green,
    Cyan,
    Magenta,
    Red,
    /// The part of an id that tells it from every other.
    IdPrefix,
}

impl Theme {
    fn paint(&self, style: Style, text: &str) -> String {
        if !self.color {
            return text.to_owned();
        }
        let code = match style {
            Style::Bold => "1",
            Style::Dim => "2",
            Style::Yellow => "33",
            Style::Green => "32",
            Style::Cyan => "36",
            Style::Magenta => "35",
            Style::Red => "31",
            Style::IdPrefix => "1;33",
        };
        format!("\x1b[{code}m{text}\x1b[0m")
    }

    /// Text in the dim style, for secondary lines.
    pub fn dim(&self, text: &str) -> String {
        self.paint(Style::Dim, text)
    }

    /// Text in the added (green) or removed (red) style of a diff, or the hunk style.
    pub fn diff_line(&self, line: &str) -> String {
        match line.as_bytes().first() {
            Some(b'+') => self.paint(Style::Green, line),
            Some(b'-') => self.paint(Style::Red, line),
            Some(b'@') => self.paint(Style::Cyan, line),
            _ => line.to_owned(),
        }
    }

    fn role(&self, kind: &Kind) -> String {
        let style = match kind {
            Kind::User { .. } => Style::Green,
            Kind::Assistant { .. } => Style::Cyan,
            Kind::Reasoning { .. } => Style::Dim,
            Kind::ToolCall { .. } | Kind::ToolResult { .. } => Style::Magenta,
            _ => Style::Yellow,
        };
        self.paint(style, kind.type_name())
    }
}

/// Stored text made safe for a terminal, keeping line breaks and tabs: every other control
/// character shows visibly (C0 in caret notation, `\x1b` → `^[`, `\r` → `^M`; DEL → `^?`;
/// C1 and the bidi overrides and isolates, which can disguise text, as `<U+009B>`), so only
/// convo's own colour codes reach the terminal. JSON output needs none of this.
pub fn escape(text: &str) -> Cow<'_, str> {
    escape_with(text, false)
}

/// [`escape`] for a field shown on one line (a title, a subject, an error): a line break
/// shows as `\n` too, so it cannot forge a line of its own.
pub fn escape_line(text: &str) -> Cow<'_, str> {
    escape_with(text, true)
}

fn is_unsafe(c: char, one_line: bool) -> bool {
    match c {
        '\n' => one_line,
        '\t' => false,
        '\0'..='\x1f' | '\x7f' | '\u{80}'..='\u{9f}' => true,
        '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' => true,
        _ => false,
    }
}

fn escape_with(text: &str, one_line: bool) -> Cow<'_, str> {
    if !text.chars().any(|c| is_unsafe(c, one_line)) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if is_unsafe(c, one_line) { out.push_str(&escape_char(c)) } else { out.push(c) }
    }
    Cow::Owned(out)
}

/// How an unsafe character shows: `\n`, caret notation, or `<U+XXXX>`.
fn escape_char(c: char) -> String {
    match c {
        '\n' => "\\n".to_owned(),
        '\x7f' => "^?".to_owned(),
        '\0'..='\x1f' => format!("^{}", char::from(c as u8 + b'@')),
        c => format!("<U+{:04X}>", u32::from(c)),
    }
}

pub use crate::store::subject::thousands;

/// The token estimate, saying how it was made.
pub fn tokens(n: u64) -> String {
    format!("~{} tokens (chars/4)", thousands(n))
}

/// `1 event`, `2 events`, `12,345 events`: a count and its noun, which takes an `s`.
pub fn plural(n: u64, word: &str) -> String {
    if n == 1 { format!("{n} {word}") } else { format!("{} {word}s", thousands(n)) }
}

fn indented(out: &mut dyn Write, text: &str) -> io::Result<()> {
    for line in text.lines() {
        if line.is_empty() {
            writeln!(out)?;
        } else {
            writeln!(out, "    {}", escape_line(line))?;
        }
    }
    Ok(())
}

/// What to print beside an event of a projected view: how it relates to the raw
/// conversation, and the raw turn it stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Label {
    pub mark: Mark,
    pub turn: Option<u64>,
}

/// How a shown event relates to the raw conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    Raw,
    /// Content stripped by a compaction.
    Compacted,
    /// Made up by the projection (a summary pair, a placeholder).
    Synthetic,
}

/// The header of `show`: title, id (whole, its unique prefix highlighted), a line of counts,
/// and where the conversation came from: the conversation it is a subagent's work in, the
/// one it was forked from. `title_of` names those (`None`: not in the store).
pub fn header(
    out: &mut dyn Write,
    summary: &Summary,
    ids: &ShortIds,
    title_of: &dyn Fn(&str) -> Option<String>,
    theme: Theme,
) -> io::Result<()> {
    let title = escape_line(summary.title.as_deref().unwrap_or("(untitled)"));
    writeln!(out, "{} {}", theme.paint(Style::Bold, &title), ids.show_whole(&summary.id, theme))?;
    let counts = format!(
        "{}, {}, {}",
        plural(summary.stats.turns, "turn"),
        plural(summary.stats.events, "event"),
        tokens(summary.tokens)
    );
    writeln!(out, "{}", theme.paint(Style::Dim, &counts))?;
    let related = |id: &str| {
        let name = title_of(id).map(|t| format!(" \"{}\"", fit(&t, Some(50)))).unwrap_or_default();
        format!("{}{name}", ids.short(id, theme))
    };
    if let Some(parent) = &summary.subagent_of {
        writeln!(out, "{} {}", theme.dim("subagent of"), related(parent))?;
    }
    if let Some(fork) = &summary.forked_from {
        writeln!(
            out,
            "{} {} {}",
            theme.dim("forked from"),
            related(&fork.id),
            theme.dim(&format!("at turn {}", fork.turn))
        )?;
    }
    Ok(())
}

/// `show`: events for reading in a terminal. `brief` folds each tool call and tool result
/// to one line; `labels` (empty: raw events, numbered here) mark compacted and synthetic
/// events and give each its raw turn.
pub fn conversation(
    out: &mut dyn Write,
    events: &[Event],
    labels: &[Label],
    detail: Detail,
    theme: Theme,
) -> io::Result<()> {
    conversation_part(out, events, labels, None, detail, theme)
}

/// How much of each event [`conversation`] shows.
#[derive(Debug, Clone, Copy, Default)]
pub struct Detail {
    /// Each tool call and result on one line.
    pub brief: bool,
    /// After each turn, the tokens its model calls used, as recorded (`show --verbose`).
    pub usage: bool,
}

/// `usage: 64 in · 2,003 out · 190,261 cache read · 26,074 cache write (claude-sonnet-4-…)`
/// for the events of one turn; `None` when none recorded usage.
fn turn_usage_line(events: &[Event]) -> Option<String> {
    let usage = crate::event::usage_of(events);
    if usage.is_empty() {
        return None;
    }
    let n = |v: Option<u64>| thousands(v.unwrap_or(0));
    let mut models: Vec<&str> = events.iter().filter_map(|e| e.extra.get("model")?.as_str()).collect();
    models.dedup();
    let mut line = format!(
        "usage: {} in · {} out · {} cache read · {} cache write",
        n(usage.input_tokens),
        n(usage.output_tokens),
        n(usage.cache_read_tokens),
        n(usage.cache_write_tokens)
    );
    if !models.is_empty() {
        line += &format!(" ({})", models.join(", "));
    }
    Some(escape_line(&line).into_owned())
}

/// [`conversation`], only the events at the places `shown` holds (in order; `None`: all).
/// The rest still name what a shown one needs (a result's tool), and a part that starts
/// inside a turn is headed by that turn.
pub fn conversation_part(
    out: &mut dyn Write,
    events: &[Event],
    labels: &[Label],
    shown: Option<&[usize]>,
    detail: Detail,
    theme: Theme,
) -> io::Result<()> {
    let brief = detail.brief;
    let tool_names: std::collections::HashMap<&str, &str> = events
        .iter()
        .filter_map(|e| match &e.kind {
            Kind::ToolCall { call_id, name, .. } => Some((call_id.as_str(), name.as_str())),
            _ => None,
        })
        .collect();
    let turns = if labels.is_empty() { turn_numbers(events) } else { labels.iter().map(|l| l.turn).collect() };
    // Who and what made each turn, for its heading.
    let mut who: std::collections::HashMap<u64, crate::event::who::Who> = std::collections::HashMap::new();
    for (event, turn) in events.iter().zip(&turns) {
        if let Some(turn) = turn {
            who.entry(*turn).or_default().add(event);
        }
    }
    let heading = |turn: u64, event: &Event| {
        let time = escape_line(event.ts.get(..19).unwrap_or(&event.ts)).replace('T', " ");
        let by = who.get(&turn).filter(|w| !w.is_empty()).map(|w| format!(" ── {}", escape_line(&w.label())));
        theme.paint(Style::Bold, &format!("── turn {turn} ── {time}{}", by.unwrap_or_default()))
    };
    // Where each turn starts, for its usage line after its last event.
    let ends_turn = |i: usize| turns.get(i + 1).is_none_or(|next| *next != turns[i]);
    let mut turn_start = 0;
    let mut first = true;
    for (i, (event, turn)) in events.iter().zip(turns.iter().copied()).enumerate() {
        if i > 0 && turns[i - 1] != turn {
            turn_start = i;
        }
        let usage_after = detail.usage && ends_turn(i);
        if shown.is_some_and(|shown| shown.binary_search(&i).is_err()) {
            if usage_after
                && shown.is_some_and(|s| s.iter().any(|&k| (turn_start..=i).contains(&k)))
                && let Some(line) = turn_usage_line(&events[turn_start..=i])
            {
                writeln!(out, "{}", theme.paint(Style::Dim, &line))?;
            }
            continue;
        }
        if std::mem::take(&mut first)
            && !event.starts_turn()
            && let (Some(turn), Some(_)) = (turn, shown)
        {
            writeln!(out)?;
            writeln!(out, "{}", heading(turn, event))?;
        }
        let mark = match labels.get(i).map(|l| l.mark) {
            Some(Mark::Compacted) => format!(" {}", theme.paint(Style::Dim, "[compacted]")),
            Some(Mark::Synthetic) => format!(" {}", theme.paint(Style::Dim, "[synthetic]")),
            _ => String::new(),
        };
        let role = format!("{}{mark}", theme.role(&event.kind));
        if let (true, Some(turn)) = (event.starts_turn(), turn) {
            writeln!(out)?;
            writeln!(out, "{}", heading(turn, event))?;
        } else if turn.is_none() && matches!(event.kind, Kind::System { .. }) {
            writeln!(out)?;
        }
        match &event.kind {
            Kind::System { content }
            | Kind::User { content }
            | Kind::Assistant { content }
            | Kind::Reasoning { content } => {
                writeln!(out, "{}", role)?;
                indented(out, content)?;
            }
            Kind::ToolCall { call_id, name, arguments } => {
                let args = arguments.to_string();
                let name = escape_line(name);
                if brief {
                    let args = fit(&args, Some(80));
                    writeln!(out, "{} {} {}", role, name, theme.paint(Style::Dim, &args))?;
                } else {
                    writeln!(out, "{} {} {}", role, name, theme.paint(Style::Dim, &escape_line(call_id)))?;
                    let pretty = serde_json::to_string_pretty(arguments).unwrap_or(args);
                    indented(out, &pretty)?;
                }
            }
            Kind::ToolResult { call_id, content, is_error } => {
                let name = escape_line(tool_names.get(call_id.as_str()).copied().unwrap_or("unknown"));
                let status = if *is_error { theme.paint(Style::Red, "error") } else { "success".to_owned() };
                if brief {
                    let lines = content.lines().count() as u64;
                    writeln!(out, "{} {name}: {status}, {}", role, plural(lines, "line"))?;
                } else {
                    writeln!(out, "{} {name} {} {status}", role, theme.paint(Style::Dim, &escape_line(call_id)))?;
                    indented(out, content)?;
                }
            }
            Kind::Config { set } => {
                writeln!(out, "{} {}", role, escape_line(&Value::Object(set.clone()).to_string()))?;
            }
            Kind::Compaction => match crate::compaction::Record::from_event(event) {
                Ok(crate::compaction::Record::Apply(c)) => {
                    let (id, what) = (escape_line(&event.id), c.describe());
                    writeln!(out, "{role} {id} turns {}-{} {}", c.from_turn, c.to_turn, escape_line(&what))?;
                }
                Ok(crate::compaction::Record::Revoke { target }) => {
                    writeln!(out, "{role} {} undoes {}", escape_line(&event.id), escape_line(&target))?
                }
                Err(_) => writeln!(out, "{role} {}", escape_line(&Value::Object(event.extra.clone()).to_string()))?,
            },
            Kind::Other(_) => {
                writeln!(out, "{} {}", role, escape_line(&Value::Object(event.extra.clone()).to_string()))?;
            }
        }
        if usage_after && let Some(line) = turn_usage_line(&events[turn_start..=i]) {
            writeln!(out, "{}", theme.paint(Style::Dim, &line))?;
        }
    }
    Ok(())
}

/// The marks and events of a projected view, for [`conversation`].
pub fn marked(view: &[Projected]) -> (Vec<Event>, Vec<Label>) {
    view.iter()
        .map(|p| {
            let mark = match p.origin {
                Origin::Raw => Mark::Raw,
                Origin::Rewritten { .. } => Mark::Compacted,
                Origin::Synthetic { .. } => Mark::Synthetic,
            };
            (p.event.clone(), Label { mark, turn: p.raw_turn })
        })
        .unzip()
}

/// `show --compacted --format jsonl`: the projected events, marked: `compacted_by` on a
/// stripped event, `synthetic` (and the `compaction` behind it) on a made-up one.
pub fn projected_jsonl(out: &mut dyn Write, view: &[Projected]) -> io::Result<()> {
    for p in view {
        out.write_all(projected_line(p).as_bytes())?;
    }
    Ok(())
}

/// One event of a view as a JSONL line: a rewritten one names its compaction
/// (`compacted_by`), a made-up one says so (`synthetic`, and `compaction` if one made it).
fn projected_line(p: &Projected) -> String {
    let mut event = p.event.clone();
    match &p.origin {
        Origin::Raw => {}
        Origin::Rewritten { by } => {
            event.extra.insert("compacted_by".into(), Value::String(by.clone()));
        }
        Origin::Synthetic { by } => {
            event.extra.insert("synthetic".into(), Value::Bool(true));
            if let Some(by) = by {
                event.extra.insert("compaction".into(), Value::String(by.clone()));
            }
        }
    }
    event.to_line()
}

/// [`projected_jsonl`] of a view decided from outlines, its raw events read from their
/// stored lines as `segments` yields them (a segment's bytes at a time). An event left as it
/// is goes out as its stored line; a stripped part is replaced in the line's bytes where
/// the outline knows its place; anything else (a truncation, a line outlined by the full
/// parse) is parsed and written like [`projected_jsonl`] writes it. Memory: one segment.
pub fn projected_jsonl_stream<E: From<io::Error>>(
    out: &mut dyn Write,
    items: &[Item],
    outlines: &[Outline],
    segments: impl Iterator<Item = Result<Vec<u8>, E>>,
) -> Result<(), E> {
    let mut segments = segments;
    let mut segment: Vec<u8> = Vec::new();
    let (mut at, mut next_index) = (0usize, 0usize);
    for item in items {
        let (index, edit) = match item {
            Item::Raw { index, edit, .. } => (*index, edit),
            Item::Synthetic(_) => {
                out.write_all(projected_line(&projection::materialise(std::slice::from_ref(item), &[])[0]).as_bytes())?;
                continue;
            }
        };
        // Lines up to this item's: each segment holds whole lines.
        let line = loop {
            if at == segment.len() {
                segment = match segments.next() {
                    Some(bytes) => bytes?,
                    None => return Err(io::Error::other(format!("event {index} is not in the stored lines")).into()),
                };
                at = 0;
                continue;
            }
            let end = memchr::memchr(b'\n', &segment[at..]).map_or(segment.len(), |n| at + n + 1);
            let line = &segment[at..end];
            at = end;
            next_index += 1;
            if next_index - 1 == index {
                break line;
            }
        };
        match edited_line(line, edit, &outlines[index]) {
            Some(bytes) => out.write_all(&bytes)?,
            None => {
                let text = std::str::from_utf8(line).map_err(io::Error::other)?;
                let mut events = crate::event::parse_stored(text).map_err(io::Error::other)?;
                let event = events.pop().ok_or_else(|| io::Error::other("an empty stored line"))?;
                let turn = match item {
                    Item::Raw { turn, .. } => *turn,
                    Item::Synthetic(_) => None,
                };
                out.write_all(projected_line(&projection::apply(edit, turn, &event)).as_bytes())?;
            }
        }
    }
    Ok(())
}

/// `line` (a stored line, newline included) with `edit` made in its bytes; `None` when that
/// needs the parsed event.
fn edited_line(line: &[u8], edit: &Edit, outline: &Outline) -> Option<Vec<u8>> {
    let (value, by) = match (edit, &outline.shape) {
        (Edit::None, _) => return Some(line.to_vec()),
        (Edit::EmptyArguments { by, kept }, Shape::ToolCall { .. }) => {
            (kept.as_ref().map_or_else(|| "{}".to_owned(), |k| k.arguments.to_string()), by)
        }
        (Edit::StatusLine { by, line }, Shape::ToolResult { .. }) => (Value::String(line.to_string()).to_string(), by),
        _ => return None,
    };
    let (a, b) = outline.span?;
    let (a, b) = (a as usize, b as usize);
    let body = line.strip_suffix(b"\n")?.strip_suffix(b"}")?;
    // A stored `compacted_by` of its own keeps its place in the parsed event: not here.
    // (Outside the replaced value: inside it, the text is gone.)
    let own = |part: &[u8]| memchr::memmem::find(part, b"\"compacted_by\"").is_some();
    if a > b || b > body.len() || own(&body[..a]) || own(&body[b..]) {
        return None;
    }
    let by = Value::String(by.to_string()).to_string();
    let mut out = Vec::with_capacity(a + value.len() + (body.len() - b) + by.len() + 20);
    out.extend_from_slice(&body[..a]);
    out.extend_from_slice(value.as_bytes());
    out.extend_from_slice(&body[b..]);
    out.extend_from_slice(b",\"compacted_by\":");
    out.extend_from_slice(by.as_bytes());
    out.extend_from_slice(b"}\n");
    Some(out)
}

fn git_date(rfc3339: &str) -> String {
    // git's date format, parsed once: `log` prints one per entry, and parsing the format
    // string each time cost as much as the rest of the date.
    static GIT_DATE: std::sync::LazyLock<Vec<chrono::format::Item<'static>>> = std::sync::LazyLock::new(|| {
        chrono::format::StrftimeItems::new("%a %b %-d %H:%M:%S %Y %z").parse_to_owned().unwrap_or_default()
    });
    chrono::DateTime::parse_from_rfc3339(rfc3339)
        .map(|d| d.format_with_items(GIT_DATE.iter()).to_string())
        .unwrap_or_else(|_| escape_line(rfc3339).into_owned())
}

fn counts(entry: &LogEntry) -> Option<String> {
    Some(format!("{}, {}, {}", plural(entry.turns?, "turn"), plural(entry.events?, "event"), tokens(entry.tokens?)))
}

/// `log`: like `git log`, with the conversation's size after each commit. `--oneline` lines
/// fit `width` columns: the counts shorten to tokens, then go, then the subject is cut.
pub fn log(
    out: &mut dyn Write,
    entries: &[LogEntry],
    oneline: bool,
    ids: &ShortIds,
    width: Option<usize>,
    theme: Theme,
) -> io::Result<()> {
    for (i, entry) in entries.iter().enumerate() {
        if oneline {
            writeln!(out, "{}", log_line(entry, width, theme))?;
            continue;
        }
        if i > 0 {
            writeln!(out)?;
        }
        writeln!(out, "{}", theme.paint(Style::Yellow, &format!("commit {}", escape_line(&entry.commit))))?;
        if let Some(id) = &entry.conversation {
            writeln!(out, "Convo:  {}", ids.show_whole(id, theme))?;
        }
        writeln!(out, "Author: {}", escape_line(&entry.author))?;
        writeln!(out, "Date:   {}", git_date(&entry.date))?;
        if !entry.who.is_empty() {
            writeln!(out, "By:     {}", escape_line(&entry.who.label()))?;
        }
        writeln!(out)?;
        writeln!(out, "    {}{}", subject(entry, None, theme), undone(entry, theme))?;
        if let Some(c) = counts(entry) {
            writeln!(out, "    {}", theme.paint(Style::Dim, &format!("after: {c}")))?;
        }
    }
    Ok(())
}

/// One `log --oneline` line: hash, date, subject, `(undone)`, counts after the commit.
fn log_line(entry: &LogEntry, width: Option<usize>, theme: Theme) -> String {
    let hash = fit(entry.commit.get(..7).unwrap_or(&entry.commit), None);
    let date = fit(entry.date.get(..10).unwrap_or(&entry.date), None);
    let undone_text = if entry.undone { " (undone)" } else { "" };
    let full = counts(entry).map(|c| format!(" [{c}]"));
    let short = entry.tokens.map(|t| format!(" [~{} tok]", thousands(t)));
    let fixed = fit::columns(&hash) + 1 + fit::columns(&date) + 1 + undone_text.len();
    let subject_width = fit::columns(&fit(&entry.subject, None));
    // The counts in full if the whole subject fits beside them, else the tokens alone, else
    // none; the subject is cut only when nothing is left to drop.
    let after = match width {
        None => full,
        Some(w) => [full, short, None]
            .into_iter()
            .find(|c| c.as_ref().is_none_or(|c| fixed + subject_width + c.len() <= w))
            .flatten(),
    };
    let room = width.map(|w| w.saturating_sub(fixed + after.as_ref().map_or(0, String::len)));
    let after = after.map(|a| format!(" {}", theme.paint(Style::Dim, a.trim_start()))).unwrap_or_default();
    format!(
        "{} {date} {}{}{after}",
        theme.paint(Style::Yellow, &hash),
        subject(entry, room, theme),
        undone(entry, theme)
    )
}

/// Compactions stand out from appends. Cut to `width` columns when given.
fn subject(entry: &LogEntry, width: Option<usize>, theme: Theme) -> String {
    let subject = fit(&entry.subject, width);
    if entry.subject.starts_with("compact:") { theme.paint(Style::Magenta, &subject) } else { subject }
}

fn undone(entry: &LogEntry, theme: Theme) -> String {
    if entry.undone { format!(" {}", theme.paint(Style::Red, "(undone)")) } else { String::new() }
}

/// The narrowest title column `list` keeps before it drops other columns.
const MIN_TITLE: usize = 30;

/// `list`: one conversation per line, the active one starred, ids in a column as wide as
/// the longest of their shortest unique prefixes (so each shown id names one conversation). A conversation another came from is followed by the others,
/// indented: `└` a subagent's work, `⑂` a fork. Lines fit `width` columns: the columns that
/// say least go first (events, the time of day, turns, the date, tokens), then titles are cut.
pub fn list(
    out: &mut dyn Write,
    summaries: &[Summary],
    active: Option<&str>,
    ids: &ShortIds,
    width: Option<usize>,
    theme: Theme,
    used: Option<&std::collections::HashMap<String, u64>>,
) -> io::Result<()> {
    let rows = family_order(summaries);
    let id_width = summaries.iter().map(|s| ids.width(&s.id)).max().unwrap_or(0);
    let titles: Vec<(String, String)> = rows
        .iter()
        .map(|&(i, depth)| {
            let s = &summaries[i];
            // An orphan (its parent removed, or not pulled yet) stands on its own: drawn
            // with a marker at the top level it would read as the line above's.
            let marker = if depth == 0 {
                ""
            } else if s.subagent_of.is_some() {
                "└ "
            } else if s.forked_from.is_some() {
                "⑂ "
            } else {
                ""
            };
            let indent = "  ".repeat(depth.saturating_sub(1));
            (format!("{indent}{marker}"), s.title.clone().unwrap_or_else(|| "(untitled)".to_owned()))
        })
        .collect();
    // Columns after the title, most useful first; each a cell per row, right-aligned.
    let cells =
        |f: &dyn Fn(&Summary) -> String| -> Vec<String> { rows.iter().map(|&(i, _)| f(&summaries[i])).collect() };
    let tokens = cells(&|s| format!("~{} tok", thousands(s.tokens)));
    let turns = cells(&|s| plural(s.stats.turns, "turn"));
    let events = cells(&|s| plural(s.stats.events, "event"));
    let date = cells(&|s| escape_line(s.updated.get(..10).unwrap_or(&s.updated)).into_owned());
    let time = cells(&|s| escape_line(s.updated.get(..16).unwrap_or(&s.updated)).replace('T', " "));
    let natural_title = titles.iter().map(|(p, t)| fit::columns(p) + fit::columns(&fit(t, None))).max().unwrap_or(0);
    // From everything to nothing: the first layout that leaves the title its room wins.
    // `list --usage`: the tokens the conversation's model calls used, beside its size.
    let used_cells = used.map(|used| cells(&|s| format!("{} used", thousands(used.get(&s.id).copied().unwrap_or(0)))));
    let base: [&[&Vec<String>]; 6] = [
        &[&turns, &events, &tokens, &time],
        &[&turns, &tokens, &time],
        &[&turns, &tokens, &date],
        &[&tokens, &date],
        &[&tokens],
        &[],
    ];
    let layouts: Vec<Vec<&Vec<String>>> = base
        .iter()
        .map(|layout| {
            let mut columns = layout.to_vec();
            if let (Some(used), Some(at)) = (&used_cells, columns.iter().position(|c| std::ptr::eq(*c, &tokens))) {
                columns.insert(at + 1, used);
            }
            columns
        })
        .collect();
    let width_of = |column: &Vec<String>| column.iter().map(|c| fit::columns(c)).max().unwrap_or(0);
    let fixed = |layout: &[&Vec<String>]| 2 + id_width + 1 + layout.iter().map(|c| 2 + width_of(c)).sum::<usize>();
    let layout: &[&Vec<String>] = match width {
        None => &layouts[0],
        Some(w) => {
            layouts.iter().find(|l| fixed(l) + natural_title.min(MIN_TITLE) <= w).unwrap_or(&layouts[layouts.len() - 1])
        }
    };
    let room = width.map(|w| w.saturating_sub(fixed(layout)));
    let shown: Vec<String> = titles
        .iter()
        .map(|(prefix, title)| {
            let left = room.map(|r| r.saturating_sub(fit::columns(prefix)));
            format!("{prefix}{}", fit(title, left))
        })
        .collect();
    let title_width = shown.iter().map(|t| fit::columns(t)).max().unwrap_or(0);
    // Once per column, not per row: a store of 10,000 conversations has 10,000 rows.
    let widths: Vec<usize> = layout.iter().map(|c| width_of(c)).collect();
    for (row, &(i, _)) in rows.iter().enumerate() {
        let s = &summaries[i];
        let mark = if active == Some(s.id.as_str()) { theme.paint(Style::Green, "*") } else { " ".to_owned() };
        let id = ids.show(&s.id, id_width, theme);
        let id_pad = id_width - s.id.chars().count().min(id_width);
        let title = &shown[row];
        let mut line = format!("{mark} {id}{:id_pad$} {title}", "");
        let mut pad = title_width - fit::columns(title);
        for (column, width) in layout.iter().zip(&widths) {
            let cell = &column[row];
            let align = width - fit::columns(cell);
            line += &format!("{:pad$}  {:align$}{cell}", "", "");
            pad = 0;
        }
        writeln!(out, "{}", line.trim_end())?;
    }
    Ok(())
}

/// Rows in the order `list` shows them, with their depth: each conversation followed by
/// those that came from it (subagents and forks, in store order), depth first. One whose
/// source is not in the store stands at the top; a cycle (only a hand-edited store has one)
/// is broken where it is first met.
pub fn family_order(summaries: &[Summary]) -> Vec<(usize, usize)> {
    let index: std::collections::HashMap<&str, usize> =
        summaries.iter().enumerate().map(|(i, s)| (s.id.as_str(), i)).collect();
    let parent = |s: &Summary| {
        s.subagent_of
            .as_deref()
            .or(s.forked_from.as_ref().map(|f| f.id.as_str()))
            .and_then(|p| index.get(p).copied())
            .filter(|p| summaries[*p].id != s.id)
    };
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); summaries.len()];
    let mut roots = Vec::new();
    for (i, s) in summaries.iter().enumerate() {
        match parent(s) {
            Some(p) => children[p].push(i),
            None => roots.push(i),
        }
    }
    let mut order = Vec::with_capacity(summaries.len());
    let mut seen = vec![false; summaries.len()];
    let visit = |start: usize, order: &mut Vec<(usize, usize)>, seen: &mut Vec<bool>| {
        let mut stack = vec![(start, 0)];
        while let Some((i, depth)) = stack.pop() {
            if std::mem::replace(&mut seen[i], true) {
                continue;
            }
            order.push((i, depth));
            stack.extend(children[i].iter().rev().map(|&c| (c, depth + 1)));
        }
    };
    for r in roots {
        visit(r, &mut order, &mut seen);
    }
    for i in 0..summaries.len() {
        if !seen[i] {
            visit(i, &mut order, &mut seen);
        }
    }
    order
}

/// `fsck`: one problem per line.
pub fn problems(out: &mut dyn Write, problems: &[Problem]) -> io::Result<()> {
    for p in problems {
        writeln!(out, "{}", escape_line(&p.to_string()))?;
    }
    Ok(())
}

/// The captures that failed, newest first: when, what captured, the file, the error.
pub fn failed_captures(out: &mut dyn Write, failures: &[crate::store::FailedCapture]) -> io::Result<()> {
    if failures.is_empty() {
        return writeln!(out, "No failed captures.");
    }
    let n = failures.len();
    writeln!(out, "{n} failed capture{} (the newest first):", if n == 1 { "" } else { "s" })?;
    for f in failures.iter().rev() {
        writeln!(out, "  {}  {}  {}", escape_line(&f.at), escape_line(&f.by), escape_line(&f.path))?;
        writeln!(out, "      {}", escape_line(&f.error))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousands_groups_digits() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(48210), "48,210");
        assert_eq!(thousands(1234567), "1,234,567");
    }

    #[test]
    fn escape_makes_controls_visible() {
        assert!(matches!(escape("plain\ttext\nline"), Cow::Borrowed(_)));
        assert_eq!(escape("a\x1b[31mb\x07\r\0\x7f\n"), "a^[[31mb^G^M^@^?\n");
        assert_eq!(escape("\u{9b}\u{85}\u{202e}\u{2066}\u{2069}é"), "<U+009B><U+0085><U+202E><U+2066><U+2069>é");
        assert_eq!(escape_line("one\ntwo\tthree"), "one\\ntwo\tthree");
    }
}
