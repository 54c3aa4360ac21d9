//! Commit subjects: the one line `convo log` and `git log --oneline` show for each kind of
//! change. Every subject convo writes is composed here, so the vocabulary stays one and
//! `log` can rely on its shape (`<verb>: <conversation> ...`).

/// Titles go into commit subjects: keep them to one short line.
pub fn name(id: &str, title: Option<&str>) -> String {
    match title {
        Some(title) => {
            let one_line: String = title.split_whitespace().collect::<Vec<_>>().join(" ");
            let mut short: String = one_line.chars().take(50).collect();
            if short.len() < one_line.len() {
                short.push('…');
            }
            format!("\"{short}\"")
        }
        None => id.to_owned(),
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

pub(crate) fn plural(n: u64, word: &str) -> String {
    if n == 1 { format!("{n} {word}") } else { format!("{n} {word}s") }
}

/// `append: "fix login" turns 2-4 (+3 events)`.
pub(crate) fn append(name: &str, turns: &[Option<u64>], count: usize) -> String {
    let first = turns.iter().flatten().next();
    let last = turns.iter().flatten().last();
    let turn = match (first, last) {
        (Some(a), Some(b)) if a == b => format!(" turn {a}"),
        (Some(a), Some(b)) => format!(" turns {a}-{b}"),
        _ => String::new(),
    };
    format!("append: {name}{turn} (+{})", plural(count as u64, "event"))
}

/// What a compaction (or its undo) covers, for its subject.
pub struct CompactionLine {
    pub name: String,
    pub from_turn: u64,
    pub to_turn: u64,
    /// The policies, as `Compaction::describe` puts them: `[strip reasoning]`.
    pub policies: String,
    pub tokens_before: u64,
    pub tokens_after: u64,
}

/// `compact: "fix login" turns 0-9 [strip reasoning] ~48,210 -> 9,874 tokens`; with `undo`
/// (the withdrawn compaction's id) `compact: "fix login" undo 01J… turns ...`.
pub fn compaction(line: &CompactionLine, undo: Option<&str>) -> String {
    let undo = undo.map(|id| format!(" undo {}", &id[..id.len().min(10)])).unwrap_or_default();
    format!(
        "compact: {}{undo} turns {}-{} {} ~{} -> {} tokens",
        line.name,
        line.from_turn,
        line.to_turn,
        line.policies,
        thousands(line.tokens_before),
        thousands(line.tokens_after),
    )
}

/// `config: set KEY = VALUE` in the store's convo.toml, or `config: NAME set ...` as a
/// conversation's `config` event.
pub fn config(name: Option<&str>, key: &str, value: &str) -> String {
    match name {
        Some(name) => format!("config: {name} set {key} = {value}"),
        None => format!("config: set {key} = {value}"),
    }
}

/// `config: unset KEY` in the store's convo.toml.
pub fn config_unset(key: &str) -> String {
    format!("config: unset {key}")
}

/// `import: "title" from claude-code (+812 events)`: the count is the main conversation's;
/// subagents' conversations are counted apart (`+31 events; 2 subagent conversations, +22
/// events`).
pub fn import(title: &str, format: &str, events: u64, subagents: &[u64]) -> String {
    let apart = match subagents {
        [] => String::new(),
        some => {
            format!("; {}, +{}", plural(some.len() as u64, "subagent conversation"), plural(some.iter().sum(), "event"))
        }
    };
    format!("import: \"{title}\" from {format} (+{}{apart})", plural(events, "event"))
}

/// `import: "fix login" followed from claude-code (+12 events)`: what a session file gained
/// since it was last imported (`import --follow`, `watch`, `hook`).
pub fn follow(title: &str, format: &str, events: u64) -> String {
    format!("import: \"{title}\" followed from {format} (+{})", plural(events, "event"))
}

/// `import: "fix login" followed from claude-code (+9 events in subagents' conversations)`:
/// a follow where only subagents' conversations gained events (also those it made).
pub fn follow_subagents(title: &str, format: &str, events: u64) -> String {
    format!("import: \"{title}\" followed from {format} (+{} in subagents' conversations)", plural(events, "event"))
}

/// `import: "fix login (went on in codex)" followed from codex, forked from "fix login" (+4
/// events)`: a session that carried on from an earlier point than its conversation's end,
/// in a fork of it.
pub fn went_on(title: &str, format: &str, from: &str, events: u64) -> String {
    format!("import: \"{title}\" followed from {format}, forked from {from} (+{})", plural(events, "event"))
}

/// `resume: "fix login" in claude-code as 3f2a…, compacted (17 events)` (`title` quoted by [`name`]): a conversation
/// handed to an agent as a session file its `--resume` reads (`convo resume`).
pub fn resume(title: &str, agent: &str, session: &str, compacted: bool, events: u64) -> String {
    let how = if compacted { ", compacted" } else { "" };
    format!("resume: {title} in {agent} as {session}{how} ({})", plural(events, "event"))
}

/// `import: 3 sessions from projects (+120 events)`: a folder of sessions, new and grown,
/// in one commit (`import DIR`).
pub fn folder(dir: &str, sessions: usize, events: u64) -> String {
    format!("import: {} from {dir} (+{})", plural(sessions as u64, "session"), plural(events, "event"))
}

/// `query: "fix login" turn 4 (+3 events) via local/smol`.
pub fn query(name: &str, turn: u64, events: usize, model: &str, interrupted: bool) -> String {
    let interrupted = if interrupted { " (interrupted)" } else { "" };
    format!("query: {name} turn {turn} (+{}) via {model}{interrupted}", plural(events as u64, "event"))
}

/// `fork: "copy" from "original" turn 7 (+42 events)`.
pub(crate) fn fork(name: &str, source: &str, turn: u64, events: u64) -> String {
    format!("fork: {name} from {source} turn {turn} (+{})", plural(events, "event"))
}

/// `rename: "old" -> "new"`.
pub(crate) fn rename(old: &str, new: &str) -> String {
    format!("rename: {old} -> {new}")
}

/// `rm: "fix login"`, or `rm: 3 conversations ("a", "b", "c")` for several.
pub(crate) fn remove(names: &[String]) -> String {
    match names {
        [one] => format!("rm: {one}"),
        many => format!("rm: {} conversations ({})", many.len(), many.join(", ")),
    }
}

/// `restore: "fix login" from 1a2b3c4` (the newest commit that still had it).
pub(crate) fn restore(name: &str, from: &str) -> String {
    format!("restore: {name} from {from}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn append_subjects_name_the_turns_touched() {
        assert_eq!(append("\"fix login\"", &[Some(12); 5], 5), "append: \"fix login\" turn 12 (+5 events)");
        assert_eq!(append("X", &[None], 1), "append: X (+1 event)");
        assert_eq!(append("\"t\"", &[Some(2), Some(3), Some(4)], 3), "append: \"t\" turns 2-4 (+3 events)");
    }

    #[test]
    fn long_titles_are_cut_to_one_short_line() {
        assert_eq!(name("X", Some("a\nb")), "\"a b\"");
        assert_eq!(name("X", Some(&"x".repeat(60))), format!("\"{}…\"", "x".repeat(50)));
        assert_eq!(thousands(1234567), "1,234,567");
    }
}
