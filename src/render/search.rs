//! `grep`'s output: hits grouped under their conversation, each on one line (turn, type,
//! tool, the matching text with the matches marked), cut to a width around the first match.
//! With context (`-A`/`-B`/`-C`), the events shown around hits as grep shows context lines:
//! `-` where a hit has `:`, and `--` between groups that are not next to each other.

use std::io::{self, Write};

use super::{Style, Theme, escape_line};

/// A hit as it is shown (the CLI maps the search's hits to these: `ops` is above `render`).
pub struct Hit<'a> {
    pub turn: Option<u64>,
    pub kind: &'a str,
    pub tool: Option<&'a str>,
    /// The matching line (or lines) of the event's text.
    pub line: &'a str,
    /// Byte ranges of the matches in `line`.
    pub matches: &'a [(usize, usize)],
    /// An event shown around a hit, not a hit.
    pub context: bool,
    /// With context, the event's place among the conversation's events with text.
    pub at: usize,
}

/// Characters of text kept before the first match of a cut line.
const BEFORE: usize = 40;

/// One conversation's hits: a heading (id and title), then a line per hit; `grouped`: with
/// the events around them (see the module's doc).
pub fn hits(
    out: &mut dyn Write,
    id: &str,
    title: Option<&str>,
    hits: &[Hit],
    grouped: bool,
    width: Option<usize>,
    theme: Theme,
) -> io::Result<()> {
    let title = title.map(|t| format!(" {}", escape_line(t))).unwrap_or_default();
    writeln!(out, "{}{}", theme.paint(Style::IdPrefix, id), theme.paint(Style::Bold, &title))?;
    let mut last: Option<usize> = None;
    for hit in hits {
        if grouped && last.is_some_and(|l| hit.at > l + 1) {
            writeln!(out, "{}", theme.dim("--"))?;
        }
        last = Some(hit.at);
        let turn = hit.turn.map_or_else(|| "-".to_owned(), |t| t.to_string());
        let kind = match hit.tool {
            Some(tool) => format!("{} {}", hit.kind, escape_line(tool)),
            None => hit.kind.to_owned(),
        };
        let sep = match (grouped, hit.context) {
            (false, _) => ' ',
            (true, false) => ':',
            (true, true) => '-',
        };
        let label = format!("  {turn:>5}{sep} {kind:<16} ");
        let room = width.map(|w| w.saturating_sub(label.chars().count()).max(20));
        writeln!(out, "{}{}", theme.dim(&label), snippet(hit, room, theme))?;
    }
    Ok(())
}

/// The hit's text on one line (escaped), its matches marked; with `room`, cut to that many
/// characters, starting a little before the first match.
fn snippet(hit: &Hit, room: Option<usize>, theme: Theme) -> String {
    let line = hit.line;
    let first = hit.matches.first().map_or(0, |m| m.0);
    // Start a little before the first match, on a character boundary.
    let start = match room {
        Some(_) => line[..first].char_indices().rev().nth(BEFORE).map_or(0, |(i, _)| i),
        None => 0,
    };
    let mut out = String::new();
    let mut shown = 0usize;
    if start > 0 {
        out.push('…');
        shown += 1;
    }
    let mut at = start;
    let mut pieces: Vec<(usize, usize, bool)> = Vec::new();
    for &(a, b) in hit.matches {
        if b <= at {
            continue;
        }
        let a = a.max(at);
        if a > at {
            pieces.push((at, a, false));
        }
        pieces.push((a, b, true));
        at = b;
    }
    if at < line.len() {
        pieces.push((at, line.len(), false));
    }
    for (a, b, marked) in pieces {
        let text = escape_line(&line[a..b]);
        let text = match room {
            Some(room) if shown + text.chars().count() > room => {
                let keep: String = text.chars().take(room.saturating_sub(shown + 1)).collect();
                out.push_str(&if marked { theme.paint(Style::Red, &keep) } else { keep });
                out.push('…');
                return out;
            }
            _ => text.into_owned(),
        };
        shown += text.chars().count();
        out.push_str(&if marked { theme.paint(Style::Red, &text) } else { text });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_line_is_cut_around_its_first_match_and_escaped() {
        let line = format!("{}needle\nrest{}", "x".repeat(100), "y".repeat(100));
        let h = Hit {
            turn: Some(2),
            kind: "tool_result",
            tool: Some("Bash"),
            line: &line,
            matches: &[(100, 106)],
            context: false,
            at: 0,
        };
        let shown = snippet(&h, Some(60), Theme::default());
        assert!(shown.starts_with('…'), "{shown}");
        assert!(shown.contains("needle\\nrest"), "{shown}");
        assert!(shown.ends_with('…'));
        assert_eq!(shown.chars().count(), 60);
        assert_eq!(snippet(&h, None, Theme::default()).chars().count(), line.chars().count() + 1);
    }
}
