//! Text forms of conversations, histories and listings for people and for scripts.
//!
//! Everything here writes to a `&mut dyn Write` it is given; whether colour is on is the
//! caller's decision, passed in as a [`Theme`]. No terminal detection, no environment.

pub mod compare;

use std::borrow::Cow;
use std::io::{self, Write};

use serde_json::Value;

use crate::event::{Event, Kind, turn_numbers};
use crate::projection::{Origin, Projected};
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
        match c {
            c if !is_unsafe(c, one_line) => out.push(c),
            '\n' => out.push_str("\\n"),
            '\x7f' => out.push_str("^?"),
            '\0'..='\x1f' => {
                out.push('^');
                out.push(char::from(c as u8 + b'@'));
            }
            c => out.push_str(&format!("<U+{:04X}>", u32::from(c))),
        }
    }
    Cow::Owned(out)
}

pub use crate::store::subject::thousands;

/// The token estimate, saying how it was made.
pub fn tokens(n: u64) -> String {
    format!("~{} tokens (chars/4)", thousands(n))
}

fn plural(n: u64, word: &str) -> String {
    if n == 1 { format!("{n} {word}") } else { format!("{} {word}s", thousands(n)) }
}

/// Cut `text` to one line of at most `width` characters.
fn one_line(text: &str, width: usize) -> String {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= width {
        flat
    } else {
        let mut cut: String = flat.chars().take(width.saturating_sub(1)).collect();
        cut.push('…');
        cut
    }
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

/// The header of `show`: title, id, and a line of counts.
pub fn header(out: &mut dyn Write, summary: &Summary, theme: Theme) -> io::Result<()> {
    let title = escape_line(summary.title.as_deref().unwrap_or("(untitled)"));
    writeln!(out, "{} {}", theme.paint(Style::Bold, &title), theme.paint(Style::Yellow, &escape_line(&summary.id)))?;
    let counts = format!(
        "{}, {}, {}",
        plural(summary.stats.turns, "turn"),
        plural(summary.stats.events, "event"),
        tokens(summary.tokens)
    );
    writeln!(out, "{}", theme.paint(Style::Dim, &counts))
}

/// `show`: events for reading in a terminal. `brief` folds each tool call and tool result
/// to one line; `labels` (empty: raw events, numbered here) mark compacted and synthetic
/// events and give each its raw turn.
pub fn conversation(
    out: &mut dyn Write,
    events: &[Event],
    labels: &[Label],
    brief: bool,
    theme: Theme,
) -> io::Result<()> {
    let tool_names: std::collections::HashMap<&str, &str> = events
        .iter()
        .filter_map(|e| match &e.kind {
            Kind::ToolCall { call_id, name, .. } => Some((call_id.as_str(), name.as_str())),
            _ => None,
        })
        .collect();
    let turns = if labels.is_empty() { turn_numbers(events) } else { labels.iter().map(|l| l.turn).collect() };
    for (i, (event, turn)) in events.iter().zip(turns).enumerate() {
        let mark = match labels.get(i).map(|l| l.mark) {
            Some(Mark::Compacted) => format!(" {}", theme.paint(Style::Dim, "[compacted]")),
            Some(Mark::Synthetic) => format!(" {}", theme.paint(Style::Dim, "[synthetic]")),
            _ => String::new(),
        };
        let role = format!("{}{mark}", theme.role(&event.kind));
        if let (Kind::User { .. }, Some(turn)) = (&event.kind, turn) {
            writeln!(out)?;
            let time = escape_line(event.ts.get(..19).unwrap_or(&event.ts)).replace('T', " ");
            writeln!(out, "{}", theme.paint(Style::Bold, &format!("── turn {turn} ── {time}")))?;
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
                    let args = one_line(&escape_line(&args), 80);
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
        out.write_all(event.to_line().as_bytes())?;
    }
    Ok(())
}

/// `show --format jsonl`: the stored lines, which `append` accepts back.
pub fn jsonl(out: &mut dyn Write, events: &[Event]) -> io::Result<()> {
    for event in events {
        out.write_all(event.to_line().as_bytes())?;
    }
    Ok(())
}

fn git_date(rfc3339: &str) -> String {
    chrono::DateTime::parse_from_rfc3339(rfc3339)
        .map(|d| d.format("%a %b %-d %H:%M:%S %Y %z").to_string())
        .unwrap_or_else(|_| escape_line(rfc3339).into_owned())
}

fn counts(entry: &LogEntry) -> Option<String> {
    Some(format!("{}, {}, {}", plural(entry.turns?, "turn"), plural(entry.events?, "event"), tokens(entry.tokens?)))
}

/// `log`: like `git log`, with the conversation's size after each commit.
pub fn log(out: &mut dyn Write, entries: &[LogEntry], oneline: bool, theme: Theme) -> io::Result<()> {
    for (i, entry) in entries.iter().enumerate() {
        if oneline {
            let date = escape_line(entry.date.get(..10).unwrap_or(&entry.date));
            let after =
                counts(entry).map(|c| format!(" {}", theme.paint(Style::Dim, &format!("[{c}]")))).unwrap_or_default();
            writeln!(
                out,
                "{} {date} {}{}{after}",
                theme.paint(Style::Yellow, &escape_line(entry.commit.get(..7).unwrap_or(&entry.commit))),
                subject(entry, theme),
                undone(entry, theme)
            )?;
            continue;
        }
        if i > 0 {
            writeln!(out)?;
        }
        writeln!(out, "{}", theme.paint(Style::Yellow, &format!("commit {}", escape_line(&entry.commit))))?;
        if let Some(id) = &entry.conversation {
            writeln!(out, "Convo:  {}", escape_line(id))?;
        }
        writeln!(out, "Author: {}", escape_line(&entry.author))?;
        writeln!(out, "Date:   {}", git_date(&entry.date))?;
        writeln!(out)?;
        writeln!(out, "    {}{}", subject(entry, theme), undone(entry, theme))?;
        if let Some(c) = counts(entry) {
            writeln!(out, "    {}", theme.paint(Style::Dim, &format!("after: {c}")))?;
        }
    }
    Ok(())
}

/// Compactions stand out from appends.
fn subject(entry: &LogEntry, theme: Theme) -> String {
    let subject = escape_line(&entry.subject);
    if subject.starts_with("compact:") { theme.paint(Style::Magenta, &subject) } else { subject.into_owned() }
}

fn undone(entry: &LogEntry, theme: Theme) -> String {
    if entry.undone { format!(" {}", theme.paint(Style::Red, "(undone)")) } else { String::new() }
}

/// `list`: one conversation per line, the active one starred.
pub fn list(out: &mut dyn Write, summaries: &[Summary], active: Option<&str>, theme: Theme) -> io::Result<()> {
    let titles: Vec<String> =
        summaries.iter().map(|s| one_line(&escape_line(s.title.as_deref().unwrap_or("(untitled)")), 40)).collect();
    let title_width = titles.iter().map(|t| t.chars().count()).max().unwrap_or(0);
    for (s, title) in summaries.iter().zip(titles) {
        let mark = if active == Some(s.id.as_str()) { theme.paint(Style::Green, "*") } else { " ".to_owned() };
        let pad = title_width.saturating_sub(title.chars().count());
        let updated = escape_line(s.updated.get(..16).unwrap_or(&s.updated)).replace('T', " ");
        writeln!(
            out,
            "{mark} {} {title}{:pad$}  {:>9}  {:>10}  {:>14}  {updated}",
            theme.paint(Style::Yellow, &escape_line(&s.id)),
            "",
            plural(s.stats.turns, "turn"),
            plural(s.stats.events, "event"),
            format!("~{} tok", thousands(s.tokens)),
        )?;
    }
    Ok(())
}

/// `fsck`: one problem per line.
pub fn problems(out: &mut dyn Write, problems: &[Problem]) -> io::Result<()> {
    for p in problems {
        writeln!(out, "{}", escape_line(&p.to_string()))?;
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

    #[test]
    fn one_line_cuts_and_flattens() {
        assert_eq!(one_line("a\nb", 10), "a b");
        assert_eq!(one_line("abcdef", 4), "abc…");
    }
}
