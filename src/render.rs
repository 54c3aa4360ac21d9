//! Text forms of conversations, histories and listings for people and for scripts.
//!
//! Everything here writes to a `&mut dyn Write` it is given; whether colour is on is the
//! caller's decision, passed in as a [`Theme`]. No terminal detection, no environment.

use std::io::{self, Write};

use serde_json::Value;

use crate::event::{Event, Kind, turn_numbers};
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

/// `12345` → `12,345`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

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
            writeln!(out, "    {line}")?;
        }
    }
    Ok(())
}

/// `show`: a conversation for reading in a terminal. `brief` folds each tool call and tool
/// result to one line.
pub fn conversation(
    out: &mut dyn Write,
    summary: &Summary,
    events: &[Event],
    brief: bool,
    theme: Theme,
) -> io::Result<()> {
    let title = summary.title.as_deref().unwrap_or("(untitled)");
    writeln!(out, "{} {}", theme.paint(Style::Bold, title), theme.paint(Style::Yellow, &summary.id))?;
    writeln!(
        out,
        "{}",
        theme.paint(
            Style::Dim,
            &format!(
                "{}, {}, {}",
                plural(summary.stats.turns, "turn"),
                plural(summary.stats.events, "event"),
                tokens(summary.tokens)
            )
        )
    )?;
    let tool_names: std::collections::HashMap<&str, &str> = events
        .iter()
        .filter_map(|e| match &e.kind {
            Kind::ToolCall { call_id, name, .. } => Some((call_id.as_str(), name.as_str())),
            _ => None,
        })
        .collect();
    let turns = turn_numbers(events);
    for (event, turn) in events.iter().zip(turns) {
        if let (Kind::User { .. }, Some(turn)) = (&event.kind, turn) {
            writeln!(out)?;
            let time = event.ts.get(..19).unwrap_or(&event.ts).replace('T', " ");
            writeln!(out, "{}", theme.paint(Style::Bold, &format!("── turn {turn} ── {time}")))?;
        } else if turn.is_none() && matches!(event.kind, Kind::System { .. }) {
            writeln!(out)?;
        }
        match &event.kind {
            Kind::System { content }
            | Kind::User { content }
            | Kind::Assistant { content }
            | Kind::Reasoning { content } => {
                writeln!(out, "{}", theme.role(&event.kind))?;
                indented(out, content)?;
            }
            Kind::ToolCall { call_id, name, arguments } => {
                let args = arguments.to_string();
                if brief {
                    writeln!(
                        out,
                        "{} {} {}",
                        theme.role(&event.kind),
                        name,
                        theme.paint(Style::Dim, &one_line(&args, 80))
                    )?;
                } else {
                    writeln!(out, "{} {} {}", theme.role(&event.kind), name, theme.paint(Style::Dim, call_id))?;
                    let pretty = serde_json::to_string_pretty(arguments).unwrap_or(args);
                    indented(out, &pretty)?;
                }
            }
            Kind::ToolResult { call_id, content, is_error } => {
                let name = tool_names.get(call_id.as_str()).copied().unwrap_or("unknown");
                let status = if *is_error { theme.paint(Style::Red, "error") } else { "success".to_owned() };
                if brief {
                    let lines = content.lines().count() as u64;
                    writeln!(out, "{} {name}: {status}, {}", theme.role(&event.kind), plural(lines, "line"))?;
                } else {
                    writeln!(out, "{} {name} {} {status}", theme.role(&event.kind), theme.paint(Style::Dim, call_id))?;
                    indented(out, content)?;
                }
            }
            Kind::Config { set } => {
                writeln!(out, "{} {}", theme.role(&event.kind), Value::Object(set.clone()))?;
            }
            Kind::Compaction | Kind::Other(_) => {
                writeln!(out, "{} {}", theme.role(&event.kind), Value::Object(event.extra.clone()))?;
            }
        }
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
        .unwrap_or_else(|_| rfc3339.to_owned())
}

fn counts(entry: &LogEntry) -> Option<String> {
    Some(format!("{}, {}, {}", plural(entry.turns?, "turn"), plural(entry.events?, "event"), tokens(entry.tokens?)))
}

/// `log`: like `git log`, with the conversation's size after each commit.
pub fn log(out: &mut dyn Write, entries: &[LogEntry], oneline: bool, theme: Theme) -> io::Result<()> {
    for (i, entry) in entries.iter().enumerate() {
        if oneline {
            let date = entry.date.get(..10).unwrap_or(&entry.date);
            let after =
                counts(entry).map(|c| format!(" {}", theme.paint(Style::Dim, &format!("[{c}]")))).unwrap_or_default();
            writeln!(
                out,
                "{} {date} {}{after}",
                theme.paint(Style::Yellow, &entry.commit[..7.min(entry.commit.len())]),
                entry.subject
            )?;
            continue;
        }
        if i > 0 {
            writeln!(out)?;
        }
        writeln!(out, "{}", theme.paint(Style::Yellow, &format!("commit {}", entry.commit)))?;
        if let Some(id) = &entry.conversation {
            writeln!(out, "Convo:  {id}")?;
        }
        writeln!(out, "Author: {}", entry.author)?;
        writeln!(out, "Date:   {}", git_date(&entry.date))?;
        writeln!(out)?;
        writeln!(out, "    {}", entry.subject)?;
        if let Some(c) = counts(entry) {
            writeln!(out, "    {}", theme.paint(Style::Dim, &format!("after: {c}")))?;
        }
    }
    Ok(())
}

/// `list`: one conversation per line, the active one starred.
pub fn list(out: &mut dyn Write, summaries: &[Summary], active: Option<&str>, theme: Theme) -> io::Result<()> {
    let title_width =
        summaries.iter().map(|s| s.title.as_deref().unwrap_or("(untitled)").chars().count().min(40)).max().unwrap_or(0);
    for s in summaries {
        let mark = if active == Some(s.id.as_str()) { theme.paint(Style::Green, "*") } else { " ".to_owned() };
        let title = one_line(s.title.as_deref().unwrap_or("(untitled)"), 40);
        let pad = title_width.saturating_sub(title.chars().count());
        let updated = s.updated.get(..16).unwrap_or(&s.updated).replace('T', " ");
        writeln!(
            out,
            "{mark} {} {title}{:pad$}  {:>9}  {:>10}  {:>14}  {updated}",
            theme.paint(Style::Yellow, &s.id),
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
        writeln!(out, "{p}")?;
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
    fn one_line_cuts_and_flattens() {
        assert_eq!(one_line("a\nb", 10), "a b");
        assert_eq!(one_line("abcdef", 4), "abc…");
    }
}
