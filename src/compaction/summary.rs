//! What a model is asked when it summarizes a range: the prompt (a structured hand-off),
//! the RAW events of the range as a transcript, cut into chunks that fit the model's window,
//! and the second pass that asks again for the trail the first answer left out. Pure; the call itself
//! is made by `ops` through the `llm` clients. No code path feeds a projected view here:
//! a summary is always made from the original events, which compaction never changes, so
//! what an earlier compaction stripped or summarized is still there to be read in full.

use crate::event::trail::Mark;
use crate::event::{Event, Kind, turn_numbers};

/// The default instructions: a structured hand-off, what it keeps and what it drops.
pub const DEFAULT_INSTRUCTIONS: &str = "\
You are writing a hand-off: a concise summary of part of a conversation between a user and an \
AI coding assistant, so the assistant can continue the work without the original messages. \
Under short headings, give: the task and the user's constraints and preferences, in their own \
words; decisions and why; files read, created or changed, with their paths as written; \
commands run and how they ended; errors still open, with their messages as written; commits; \
what remains, the next step first. Skip a heading with nothing under it. Omit greetings, \
superseded plans and tool output already reflected above. Do not invent anything.";

/// Instructions to combine the summaries of consecutive chunks into one.
pub const COMBINE_INSTRUCTIONS: &str = "\
The following are hand-offs of consecutive parts of one conversation, in order. Combine them \
into one hand-off under the same headings (task and constraints, decisions, files, \
commands, open errors, commits, what remains): an error a later part resolved is no longer open; drop repetition and \
superseded plans; keep paths, commands, error messages and commit ids as written.";

/// Instructions for the second pass: the hand-off left out part of the trail.
pub const SECOND_PASS_INSTRUCTIONS: &str = "\
You wrote the hand-off below from a conversation. It leaves out the files, commands, error \
messages and commit ids listed after it, which the conversation holds. Write the whole \
hand-off again, keeping it as it is and adding, in their sections and as written, each of \
those items that matters to continuing the work. Answer with the hand-off only.";

/// The second pass's message: the hand-off, and what it left out.
pub fn second_pass(summary: &str, missing: &[&(Mark, String)]) -> String {
    let mut text = format!("Hand-off:\n{summary}\n\nLeft out:");
    for (mark, item) in missing {
        text += &format!("\n- {}: {item}", mark.name());
    }
    text
}

/// The instructions for a summary: `instructions` replaces the default, `focus` adds to it.
pub fn instructions(custom: Option<&str>, focus: Option<&str>) -> String {
    let mut text = custom.unwrap_or(DEFAULT_INSTRUCTIONS).trim().to_owned();
    if let Some(focus) = focus.filter(|f| !f.trim().is_empty()) {
        text += &format!("\n\nPay particular attention to: {}", focus.trim());
    }
    text
}

/// One turn of the range as text for the summarizer.
fn render_event(event: &Event, tool_names: &std::collections::HashMap<&str, &str>) -> Option<String> {
    Some(match &event.kind {
        Kind::System { content } => format!("[system]\n{content}"),
        Kind::User { content } => format!("[user]\n{content}"),
        Kind::Assistant { content } => format!("[assistant]\n{content}"),
        Kind::Reasoning { content } => format!("[assistant reasoning]\n{content}"),
        Kind::ToolCall { name, arguments, .. } => format!("[tool call: {name}]\n{arguments}"),
        Kind::ToolResult { call_id, content, is_error } => {
            let name = tool_names.get(call_id.as_str()).copied().unwrap_or("unknown");
            format!("[tool result: {name}, {}]\n{content}", if *is_error { "error" } else { "success" })
        }
        Kind::Config { .. } | Kind::Compaction | Kind::Other(_) => return None,
    })
}

/// The transcript of turns `from..=to` of the raw `events`, one string per turn.
pub fn transcript(events: &[Event], (from, to): (u64, u64)) -> Vec<String> {
    transcript_where(events, &|_, turn| (from..=to).contains(&turn))
}

/// The transcript of `events[range]` (a compaction's own events: a range may end inside a
/// turn, and the summary must not be written from what it does not cover), one string per
/// turn; tool names and turn numbers come from the whole stream.
pub fn transcript_of(events: &[Event], range: std::ops::RangeInclusive<usize>) -> Vec<String> {
    transcript_where(events, &|index, _| range.contains(&index))
}

fn transcript_where(events: &[Event], keep: &dyn Fn(usize, u64) -> bool) -> Vec<String> {
    let tool_names = events
        .iter()
        .filter_map(|e| match &e.kind {
            Kind::ToolCall { call_id, name, .. } => Some((call_id.as_str(), name.as_str())),
            _ => None,
        })
        .collect();
    let mut turns: Vec<String> = Vec::new();
    let mut current: Option<u64> = None;
    for (index, (event, turn)) in events.iter().zip(turn_numbers(events)).enumerate() {
        let Some(turn) = turn.filter(|t| keep(index, *t)) else { continue };
        let Some(text) = render_event(event, &tool_names) else { continue };
        if current != Some(turn) {
            turns.push(format!("--- turn {turn} ---"));
            current = Some(turn);
        }
        if let Some(last) = turns.last_mut() {
            last.push('\n');
            last.push_str(&text);
        }
    }
    turns
}

/// Group turns into chunks of at most `max_chars` (a turn longer than that is cut, never
/// dropped), so no call exceeds the model's window and nothing is silently truncated.
pub fn chunks(turns: &[String], max_chars: Option<usize>) -> Vec<String> {
    let Some(max) = max_chars.filter(|m| *m > 0) else { return vec![turns.join("\n\n")] };
    let mut out: Vec<String> = Vec::new();
    let mut current = String::new();
    for turn in turns {
        let mut rest: &str = turn;
        while !rest.is_empty() {
            let room = max.saturating_sub(current.len());
            if rest.len() <= room {
                if !current.is_empty() {
                    current.push_str("\n\n");
                }
                current.push_str(rest);
                rest = "";
            } else if current.is_empty() {
                // A single turn larger than a chunk: cut it at a char boundary.
                let mut cut = room.max(1).min(rest.len());
                while !rest.is_char_boundary(cut) {
                    cut -= 1;
                }
                out.push(rest[..cut].to_owned());
                rest = &rest[cut..];
            } else {
                out.push(std::mem::take(&mut current));
            }
        }
    }
    if !current.is_empty() || out.is_empty() {
        out.push(current);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_keep_turns_whole_and_cut_only_oversized_ones() {
        let turns = vec!["a".repeat(4), "b".repeat(4), "c".repeat(10)];
        assert_eq!(chunks(&turns, None), vec![format!("aaaa\n\nbbbb\n\n{}", "c".repeat(10))]);
        assert_eq!(chunks(&turns, Some(10)), vec!["aaaa\n\nbbbb".to_owned(), "c".repeat(10)]);
        let pieces = chunks(&turns, Some(6));
        assert_eq!(pieces.concat().replace("\n\n", ""), format!("aaaabbbb{}", "c".repeat(10)), "nothing is lost");
        assert!(pieces.iter().all(|p| p.len() <= 6));
    }

    #[test]
    fn focus_adds_to_the_instructions_and_custom_replaces_them() {
        assert!(instructions(None, Some("the parser")).ends_with("Pay particular attention to: the parser"));
        assert_eq!(instructions(Some("Be brief."), None), "Be brief.");
    }
}
