//! The Markdown export: a readable transcript, tool calls folded into `<details>`,
//! compacted ranges quoted with their summary or policy. The HTML page is `interop::html`;
//! the JSONL and provider formats live with `render` and `llm::wire`.

use std::io::{self, Write};

use crate::event::{Event, Kind, turn_numbers};
use crate::projection::InForce;

/// The compaction (latest in force) covering each event, by turn.
fn covering<'a>(events: &[Event], in_force: &'a [InForce]) -> Vec<Option<&'a InForce>> {
    turn_numbers(events)
        .into_iter()
        .zip(events)
        .map(|(turn, e)| {
            if matches!(e.kind, Kind::Compaction) {
                return None;
            }
            let t = turn?;
            in_force.iter().rev().find(|c| c.first_turn.is_some_and(|a| a <= t) && c.last_turn.is_some_and(|b| t <= b))
        })
        .collect()
}

fn describe(c: &InForce) -> String {
    let range = format!("turns {}-{}", c.first_turn.unwrap_or(0), c.last_turn.unwrap_or(0));
    match &c.compaction.summary {
        Some(s) => format!("Compacted {range}, summarized by {}", s.by),
        None => format!("Compacted {range} {}", c.compaction.describe()),
    }
}

/// A code fence longer than any run of backticks in `text` (at least three), so nothing in
/// `text` can close it.
fn fence(text: &str) -> String {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    "`".repeat((longest + 1).max(3))
}

/// Text for an HTML tag's inside in Markdown: on one line (a blank line would end the HTML
/// block) and escaped, so it can close neither `<summary>` nor `<details>`.
fn inline_html(text: &str) -> String {
    escape(&text.split_whitespace().collect::<Vec<_>>().join(" "))
}

/// Markdown. Tool calls and results are folded into `<details>`, their text in a fence no
/// backtick run inside can close, their name and id escaped, like the title (plain text,
/// one line); messages stay Markdown.
pub fn markdown(out: &mut dyn Write, title: &str, events: &[Event], in_force: &[InForce]) -> io::Result<()> {
    writeln!(out, "# {}\n", inline_html(title))?;
    let cover = covering(events, in_force);
    let mut current: Option<&str> = None;
    for ((event, turn), c) in events.iter().zip(turn_numbers(events)).zip(cover) {
        let id = c.map(|c| c.id.as_str());
        if id != current {
            if let Some(c) = c {
                // A summary (and who wrote it) is stored text like any message: it may not
                // open or close the page's folds either.
                writeln!(out, "> **{}**", inert_folds(&describe(c)))?;
                if let Some(s) = &c.compaction.summary {
                    for line in s.text.lines() {
                        writeln!(out, "> {}", inert_folds(line))?;
                    }
                }
                writeln!(out)?;
            }
            current = id;
        }
        match &event.kind {
            Kind::User { content } => {
                let content = inert_folds(content);
                writeln!(out, "## Turn {}\n\n**User**\n\n{content}\n", turn.unwrap_or(0))?;
            }
            Kind::System { content } => writeln!(out, "**System**\n\n{}\n", inert_folds(content))?,
            Kind::Assistant { content } => writeln!(out, "**Assistant**\n\n{}\n", inert_folds(content))?,
            Kind::Reasoning { content } => {
                let fence = fence(content);
                writeln!(out, "<details><summary>Reasoning</summary>\n\n{fence}\n{content}\n{fence}\n\n</details>\n")?;
            }
            Kind::ToolCall { name, arguments, call_id } => {
                let args = serde_json::to_string_pretty(arguments).unwrap_or_default();
                let (name, call_id, fence) = (inline_html(name), inline_html(call_id), fence(&args));
                writeln!(
                    out,
                    "<details><summary>Tool call: {name} ({call_id})</summary>\n\n{fence}json\n{args}\n{fence}\n\n</details>\n"
                )?;
            }
            Kind::ToolResult { content, is_error, call_id } => {
                let status = if *is_error { "error" } else { "result" };
                let (call_id, fence) = (inline_html(call_id), fence(content));
                writeln!(
                    out,
                    "<details><summary>Tool {status} ({call_id})</summary>\n\n{fence}\n{content}\n{fence}\n\n</details>\n"
                )?;
            }
            Kind::Config { set } => writeln!(out, "*config: {}*\n", serde_json::Value::Object(set.clone()))?,
            Kind::Compaction | Kind::Other(_) => {}
        }
    }
    Ok(())
}

/// Message text stays Markdown, but a `<details>` or `<summary>` tag in it (opening or
/// closing, any case) is shown as text: it could otherwise swallow or close the folds the
/// export itself makes.
fn inert_folds(text: &str) -> std::borrow::Cow<'_, str> {
    let lower = text.to_ascii_lowercase();
    let is_fold_tag = |at: usize| {
        let rest = lower[at + 1..].trim_start_matches('/');
        rest.starts_with("details") || rest.starts_with("summary")
    };
    if !lower.match_indices('<').any(|(at, _)| is_fold_tag(at)) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    let mut last = 0;
    for (at, _) in lower.match_indices('<') {
        if is_fold_tag(at) {
            out.push_str(&text[last..at]);
            out.push_str("&lt;");
            last = at + 1;
        }
    }
    out.push_str(&text[last..]);
    std::borrow::Cow::Owned(out)
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fold_tags_in_messages_are_inert() {
        assert_eq!(inert_folds("a </details> b <SUMMARY> <b>ok</b>"), "a &lt;/details> b &lt;SUMMARY> <b>ok</b>");
        assert_eq!(inert_folds("no tags < here"), "no tags < here");
    }

    #[test]
    fn a_fence_outlasts_every_backtick_run() {
        assert_eq!(fence("plain"), "```");
        assert_eq!(fence("a `b` ``c``"), "```");
        assert_eq!(fence("```\nx\n````"), "`````");
        assert_eq!(fence("``````"), "```````");
    }

    #[test]
    fn inline_html_is_one_escaped_line() {
        assert_eq!(
            inline_html("a</summary>\n\n</details><script>"),
            "a&lt;/summary&gt; &lt;/details&gt;&lt;script&gt;"
        );
    }
}
