//! What a model is asked when it summarizes a range: the prompt, and the RAW events of the
//! range as a transcript, cut into chunks that fit the model's window. Pure; the call itself
//! is made by `ops` through the `llm` clients. No code path feeds a projected view here:
//! a summary is always made from the original events, which compaction never changes, so
//! what an earlier compaction stripped or summarized is still there to be read in full.

use crate::event::{Event, Kind, turn_numbers};

/// The default instructions: what a summary keeps and what it drops.
pub const DEFAULT_INSTRUCTIONS: &str = "\
You are summarizing part of a conversation between a user and an AI coding assistant, so the \
assistant can continue the work without the original messages. Write a concise summary in \
plain prose and short lists. Keep: decisions and the reasons for them; file paths, functions \
and code structures that were read, created or changed; errors met and how they were \
resolved; the user's preferences and constraints; the current state of the task and the next \
steps. Omit: greetings and filler, plans that were later superseded, and tool output whose \
content is already reflected in what you keep. Do not invent anything.";

/// Instructions to combine the summaries of consecutive chunks into one.
pub const COMBINE_INSTRUCTIONS: &str = "\
The following are summaries of consecutive parts of one conversation, in order. Combine them \
into one summary with the same rules: keep decisions and reasons, file paths and code \
structures, errors and their resolutions, the user's preferences and constraints, the task's \
state and next steps; drop repetition and superseded plans.";

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
    let tool_names = events
        .iter()
        .filter_map(|e| match &e.kind {
            Kind::ToolCall { call_id, name, .. } => Some((call_id.as_str(), name.as_str())),
            _ => None,
        })
        .collect();
    let mut turns: Vec<String> = Vec::new();
    let mut current: Option<u64> = None;
    for (event, turn) in events.iter().zip(turn_numbers(events)) {
        let Some(turn) = turn.filter(|t| (from..=to).contains(t)) else { continue };
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
