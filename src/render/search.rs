//! `grep`'s output: hits grouped under their conversation, each on one line (turn, type,
//! tool, the matching text with the matches marked), cut to a width around the first match.
//! With context (`-A`/`-B`/`-C`), the events shown around hits as grep shows context lines:
//! `-` where a hit has `:`, and `--` between groups that are not next to each other.
//!
//! Given a width (the terminal's, or `COLUMNS`), every line fits it as `list`'s do: the
//! title and each line's text are cut with `…`, counted in terminal columns (a CJK character
//! takes two). Without one (piped), lines are whole.

use std::io::{self, Write};

use unicode_width::UnicodeWidthChar;

use super::fit::columns;
use super::{Style, Theme, escape_line, fit};

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

/// Columns of text kept before the first match of a cut line (at most).
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
    let title = match (title, width) {
        (Some(t), Some(w)) => format!(" {}", fit(t, Some(w.saturating_sub(columns(id) + 1)))),
        (Some(t), None) => format!(" {}", escape_line(t)),
        (None, _) => String::new(),
    };
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
        // Two columns at least: room for `…` and a character of the text.
        let room = width.map(|w| w.saturating_sub(columns(&label)).max(2));
        writeln!(out, "{}{}", theme.dim(&label), snippet(hit, room, theme))?;
    }
    Ok(())
}

/// The hit's text on one line (escaped, a tab a space), its matches marked; with `room`, cut
/// to that many columns, starting a little before the first match.
fn snippet(hit: &Hit, room: Option<usize>, theme: Theme) -> String {
    let line = hit.line;
    let first = hit.matches.first().map_or(0, |m| m.0);
    // Start a little before the first match, on a character boundary: at most half the
    // room before it, so that the match itself shows in a narrow terminal.
    let start = match room {
        Some(room) => {
            let lead = BEFORE.min(room / 2);
            let (mut start, mut used) = (first, 0);
            for (i, c) in line[..first].char_indices().rev() {
                used += c.width().unwrap_or(1);
                if used > lead {
                    break;
                }
                start = i;
            }
            start
        }
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
        // A tab takes up to eight columns, and no width says which.
        let text = escape_line(&line[a..b]).replace('\t', " ");
        let wide = columns(&text);
        if let Some(room) = room
            && shown + wide > room
        {
            let mut keep = String::new();
            for c in text.chars() {
                let w = c.width().unwrap_or(0);
                if shown + w + 1 > room {
                    break;
                }
                keep.push(c);
                shown += w;
            }
            out.push_str(&if marked { theme.paint(Style::Red, &keep) } else { keep });
            out.push('…');
            return out;
        }
        shown += wide;
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

    #[test]
    fn wide_characters_take_two_columns() {
        let line = "日本語のエラー: needle と説明";
        let at = line.find("needle").unwrap();
        let h = Hit { turn: Some(0), kind: "user", tool: None, line, matches: &[(at, at + 6)], context: false, at: 0 };
        let shown = snippet(&h, Some(20), Theme::default());
        // Half the room before the match at most, so the match shows.
        assert_eq!(shown, "…のエラー: needle …");
        assert!(columns(&shown) <= 20);
    }
}
