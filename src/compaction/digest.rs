//! A summary convo writes itself, without a model (`convo compact --digest`).
//!
//! A model summary needs a network, a key, money and time, and may fail; a digest needs none
//! of them and is the same every time for the same events. It keeps what an agent most needs
//! to pick up the thread, the trail ([`crate::event::trail`]): per turn, what the user asked,
//! which tools ran, which files were read, edited and created, which commands ran and how
//! they ended, the errors no later success answered, the commits made, and the first
//! sentence of the answer. It is stored as an ordinary [`Summary`](super::Summary), so
//! projection, summary widening and `--undo` treat it like any other.
//!
//! It is bounded by a token budget with convo's one estimate ([`tokens`]): the oldest turns
//! are dropped first, because the recent ones are what the conversation continues from, and
//! one line says how many were left out. Pure: events in, text out.

use serde_json::Value;

use crate::event::trail::{self, Outcome, short_args};
use crate::event::{Event, Kind, title, tokens};

/// Who a digest is recorded as written by (`Summary::by`).
pub const BY: &str = "convo/digest";

/// Characters kept of the user's request and of the answer's first sentence.
const ASKED_CHARS: usize = 100;
const ANSWERED_CHARS: usize = 120;
/// Characters kept of one file path (a pasted blob in a `path` argument stays short).
const PATH_CHARS: usize = 100;
/// Files named per turn and kind before the rest are counted as `+N more`.
const MAX_FILES: usize = 8;
/// Commands listed per turn before the rest are counted.
const MAX_COMMANDS: usize = 8;
/// Characters kept of a command (the trail compares its first 60).
const COMMAND_CHARS: usize = 80;
/// Characters of a command a line shown in part keeps (as many as the trail compares).
const DENSE_COMMAND_CHARS: usize = 60;
/// Characters kept of an error line.
const ERROR_CHARS: usize = 160;
/// Argument keys that name files, in the spellings of the tools the importers know
/// (Claude Code, Codex, OpenHands, convo's own `fs_*` tools).
const PATH_KEYS: &[&str] = &["path", "file_path", "filePath", "notebook_path", "filename"];
const PATHS_KEYS: &[&str] = &["paths", "file_paths", "filePaths"];
/// How deep into nested arguments paths are looked for (`{"edits": [{"path": ...}]}`).
const MAX_DEPTH: usize = 4;

/// The digest of `events`, the raw events of a compacted range in order; `turns[i]` is the
/// turn of `events[i]` (see [`crate::event::turn_numbers`]). One line per turn, at most
/// `max_tokens` by the chars/4 estimate where that is possible at all: the header and the
/// line counting what was left out are always written.
pub fn digest(events: &[Event], turns: &[Option<u64>], max_tokens: u64) -> String {
    bounded(events, turns, max_tokens, Form { lists: (MAX_FILES, MAX_COMMANDS), met: false }, false).0
}

/// [`digest`] for a budget that may leave it more room than `max_summary_tokens`: every
/// file and command of each turn listed when that fits `max_tokens` whole (a one-turn agent
/// session runs dozens of commands, and a list cut at eight loses the rest of its trail),
/// else the oldest lines left out as usual, but the room they leave filled with the start
/// of the newest line left out (in a session of few turns, a whole line is half the trail).
/// Where the room allows every line whole with them, each line also names the errors its
/// turn met that a later success answered (what went wrong on the way is trail too).
pub fn fitted(events: &[Event], turns: &[Option<u64>], max_tokens: u64) -> String {
    let all = (usize::MAX, usize::MAX);
    match bounded(events, turns, max_tokens, Form { lists: all, met: true }, true) {
        (text, true) => text,
        _ => bounded(events, turns, max_tokens, Form { lists: all, met: false }, true).0,
    }
}

/// [`fitted`], and the room its lines leave up to `max_tokens` filled with the end of the
/// range as it was: the text of its newest events (what the user and the assistant said,
/// the commands run, the tools' output), whitespace made single spaces, the newest kept
/// first and shown in order. A budget whose step replaces a whole range cannot leave
/// the range's newest part raw when one large output there does not fit; its start, and
/// everything after it, still can.
pub fn filled(events: &[Event], turns: &[Option<u64>], max_tokens: u64) -> String {
    const HEADER: &str = "The range ends (as it was, oldest first):";
    let mut out = fitted(events, turns, max_tokens);
    let used = out.chars().count() as u64 + 1 + HEADER.chars().count() as u64;
    let mut room = max_tokens.saturating_mul(4).saturating_sub(used) as usize;
    let mut ends = Vec::new();
    for event in events.iter().rev() {
        // Each piece costs a newline and its label.
        let (label, text) = match &event.kind {
            Kind::User { content } => ("user", content.clone()),
            Kind::Assistant { content } => ("assistant", content.clone()),
            Kind::ToolCall { name, arguments, .. } => {
                (name.as_str(), command_of(arguments).unwrap_or_else(|| arguments.to_string()))
            }
            Kind::ToolResult { content, .. } => ("output", content.clone()),
            _ => continue,
        };
        let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
        let overhead = label.chars().count() + 3;
        if text.is_empty() || room <= overhead + 16 {
            if room <= overhead + 16 {
                break;
            }
            continue;
        }
        let piece = format!("{label}: {}", cut(&text, room - overhead));
        room = room.saturating_sub(piece.chars().count() + 1);
        ends.push(piece);
    }
    if !ends.is_empty() {
        out.push('\n');
        out.push_str(HEADER);
        for piece in ends.iter().rev() {
            out.push('\n');
            out.push_str(piece);
        }
    }
    out
}

/// How much of each turn a line says.
#[derive(Clone, Copy)]
struct Form {
    /// At most this many (files, commands) named per turn and kind.
    lists: (usize, usize),
    /// The errors met and answered later named too.
    met: bool,
}

/// The digest in `form`, and whether every line is in it whole. With `fill`, the room the
/// left-out lines leave takes the start of the newest of them.
fn bounded(events: &[Event], turns: &[Option<u64>], max_tokens: u64, form: Form, fill: bool) -> (String, bool) {
    let notes = notes(events, turns);
    let header = match (notes.first(), notes.last()) {
        (Some(first), Some(last)) if first.turn == last.turn => {
            format!("Digest of turn {} (written by convo, no model):", first.turn)
        }
        (Some(first), Some(last)) => {
            format!("Digest of turns {}-{} (written by convo, no model):", first.turn, last.turn)
        }
        _ => "Digest (written by convo, no model): no turns".to_owned(),
    };
    let lines: Vec<String> = notes.iter().map(|n| n.render(form)).collect();

    // Each line costs its characters and a newline. Drop from the front until the whole text
    // (header, the `left out` line when there is one, the lines kept) fits the budget.
    let cost = |line: &str| line.chars().count() as u64 + 1;
    let mut kept_chars: u64 = lines.iter().map(|l| cost(l)).sum();
    let header_chars = header.chars().count() as u64;
    let mut dropped = 0;
    while dropped < lines.len() {
        let marker = if dropped == 0 { 0 } else { cost(&left_out(dropped)) };
        if tokens(header_chars + marker + kept_chars) <= max_tokens {
            break;
        }
        kept_chars -= cost(&lines[dropped]);
        dropped += 1;
    }

    let mut out = header;
    if dropped > 0 {
        let used = header_chars + cost(&left_out(dropped)) + kept_chars;
        // The room less its newline (`cut` counts the `…` that says the line goes on).
        let room = max_tokens.saturating_mul(4).saturating_sub(used + 1);
        let partial = (fill && room > 0).then(|| {
            // As many commands, then files, as fit, in the dense form, rather than the
            // line's start (which a long list of files would fill): a command is what the
            // trail tells least elsewhere, and its first characters identify it.
            let note = &notes[dropped - 1];
            let fits = |lists: (usize, usize)| note.dense(lists, false).chars().count() as u64 <= room;
            let most = |fits: &dyn Fn(usize) -> bool, max: usize| {
                let (mut lo, mut hi) = (0, max.min(4096));
                while lo < hi {
                    let mid = (lo + hi).div_ceil(2);
                    if fits(mid) { lo = mid } else { hi = mid - 1 }
                }
                lo
            };
            let commands = most(&|n| fits((0, n)), note.commands.len());
            let files = most(&|n| fits((n, commands)), note.files.iter().map(Vec::len).max().unwrap_or(0));
            cut(&note.dense((files, commands), true), room as usize)
        });
        // A line shown in part is not left out (and its marker is no longer than the one
        // the room was counted with).
        let left = dropped - usize::from(partial.is_some());
        if left > 0 {
            out.push('\n');
            out.push_str(&left_out(left));
        }
        if let Some(line) = partial {
            out.push('\n');
            out.push_str(&line);
        }
    }
    for line in &lines[dropped..] {
        out.push('\n');
        out.push_str(line);
    }
    (out, dropped == 0)
}

fn left_out(n: usize) -> String {
    if n == 1 { "[1 earlier turn left out]".to_owned() } else { format!("[{n} earlier turns left out]") }
}

/// What one turn (or the part of it in range) did.
#[derive(Debug, Default)]
struct TurnNote {
    turn: u64,
    /// The range starts inside this turn: its user message is not in range.
    partial: bool,
    asked: Option<String>,
    /// Tool names and their call counts, in first-use order.
    tools: Vec<(String, u64)>,
    /// Files named in tool arguments, deduplicated, in first-seen order, by what the tool
    /// did with them.
    files: [Vec<String>; 4],
    /// Commands run, once each, with the outcome of their last run.
    commands: Vec<(String, Option<Outcome>, bool)>,
    /// Failures no later call of the same command or on the same file answered: what
    /// failed, and its error line.
    errors: Vec<(String, String)>,
    /// The error lines of the turn's command outputs and failures, once each, answered or
    /// not (the lines the trail counts).
    met: Vec<String>,
    /// Commits git reported.
    commits: Vec<String>,
    /// The first sentence of the last assistant text.
    answered: Option<String>,
}

/// What a tool does with the files it names, told by its name (the agents' tools: Claude
/// Code's `Read`/`Edit`/`Write`, Codex's `apply_patch`, convo's `fs_*`, `str_replace`...).
#[derive(Clone, Copy)]
enum Use {
    Read = 0,
    Edited = 1,
    Created = 2,
    Other = 3,
}

const USE_LABELS: [&str; 4] = ["read", "edited", "created", "files"];

fn use_of(tool: &str) -> Use {
    let name = tool.to_ascii_lowercase();
    let has = |words: &[&str]| words.iter().any(|w| name.contains(w));
    if has(&["edit", "modify", "patch", "replace"]) {
        Use::Edited
    } else if has(&["write", "create"]) {
        Use::Created
    } else if has(&["read", "view", "cat"]) {
        Use::Read
    } else {
        Use::Other
    }
}

/// The command a call runs (`command` or `cmd`, a string or an argv), if it runs one.
fn command_of(arguments: &Value) -> Option<String> {
    short_args(arguments).into_iter().find(|(key, _)| key == "command" || key == "cmd").map(|(_, c)| c)
}

/// The files Codex's `apply_patch` names in its patch (`*** Update File: path`), by what
/// it does with them.
fn patched_files(arguments: &Value, found: &mut Vec<(Use, String)>) {
    let text = match arguments {
        Value::String(s) => s.as_str(),
        Value::Object(map) => map.get("input").or_else(|| map.get("patch")).and_then(Value::as_str).unwrap_or(""),
        _ => "",
    };
    for line in text.lines() {
        let (kind, path) = if let Some(p) = line.strip_prefix("*** Update File: ") {
            (Use::Edited, p)
        } else if let Some(p) = line.strip_prefix("*** Add File: ") {
            (Use::Created, p)
        } else if let Some(p) = line.strip_prefix("*** Delete File: ") {
            (Use::Edited, p)
        } else {
            continue;
        };
        found.push((kind, cut(path.trim(), PATH_CHARS)));
    }
}

fn notes(events: &[Event], turns: &[Option<u64>]) -> Vec<TurnNote> {
    let mut notes: Vec<TurnNote> = Vec::new();
    // Each open call: its turn's note, and what it is (a command, or a tool and its file).
    let mut calls: std::collections::HashMap<&str, (usize, String, Option<String>)> = Default::default();
    // A slash command the user typed (`/name args`, from the agent's markup), until an event
    // other than a user message: the user message right after it is the command's
    // template, which the user did not type.
    let mut command: Option<String> = None;
    // Events before the first turn (a system prompt) belong to no turn and are not digested.
    for (event, turn) in events.iter().zip(turns) {
        let expanding = command.take();
        let Some(turn) = *turn else { continue };
        if notes.last().is_none_or(|n| n.turn != turn) {
            let partial = !matches!(event.kind, Kind::User { .. });
            notes.push(TurnNote { turn, partial, ..TurnNote::default() });
        }
        let Some(note) = notes.last_mut() else { continue };
        match &event.kind {
            Kind::User { content } => {
                let typed = title::from_command(content);
                if note.asked.is_none() {
                    note.asked = typed.clone().or(expanding.clone()).or_else(|| first_line(content));
                    note.asked = note.asked.take().map(|l| cut(&l, ASKED_CHARS));
                }
                command = typed;
            }
            Kind::ToolCall { call_id, name, arguments } => {
                match note.tools.iter_mut().find(|(n, _)| n == name) {
                    Some((_, count)) => *count += 1,
                    None => note.tools.push((name.clone(), 1)),
                }
                let mut paths = Vec::new();
                paths_in(arguments, 0, &mut paths);
                let used = use_of(name);
                let mut found: Vec<(Use, String)> = paths.into_iter().map(|p| (used, p)).collect();
                patched_files(arguments, &mut found);
                let first_file = found.first().map(|(_, p)| p.clone());
                for (kind, path) in found {
                    let list = &mut note.files[kind as usize];
                    if !list.contains(&path) {
                        list.push(path);
                    }
                }
                let command = command_of(arguments).map(|c| cut(&c, COMMAND_CHARS));
                if let Some(command) = &command
                    && !note.commands.iter().any(|(c, _, _)| c == command)
                {
                    note.commands.push((command.clone(), None, false));
                }
                // What a later success must match to answer this call's failure.
                let what = command.clone().unwrap_or_else(|| match &first_file {
                    Some(file) => format!("{name} {file}"),
                    None => name.clone(),
                });
                calls.insert(call_id.as_str(), (notes.len() - 1, what, command));
            }
            Kind::ToolResult { call_id, content, is_error } => {
                let Some((at, what, command)) = calls.remove(call_id.as_str()) else { continue };
                let outcome = Outcome::of(content, *is_error);
                let failed = outcome.failed(*is_error);
                // A success answers every earlier failure of the same thing.
                for n in notes.iter_mut() {
                    if !failed {
                        n.errors.retain(|(w, _)| *w != what);
                    }
                }
                let note = &mut notes[at];
                let (output, _) = trail::output_of(content);
                if let Some(line) = trail::first_error_line(&output).filter(|_| failed || command.is_some())
                    && !note.met.iter().any(|m| m == line)
                {
                    note.met.push(cut(line, trail::LINE_MAX));
                }
                for commit in &outcome.commits {
                    if !note.commits.contains(commit) {
                        note.commits.push(commit.clone());
                    }
                }
                if failed {
                    let line = outcome.error_line.clone().unwrap_or_else(|| "failed".into());
                    note.errors.retain(|(w, _)| *w != what);
                    note.errors.push((what, cut(&line, ERROR_CHARS)));
                }
                if let Some(command) = command
                    && let Some(entry) = note.commands.iter_mut().find(|(c, _, _)| *c == command)
                {
                    *entry = (command, Some(outcome), failed);
                }
            }
            Kind::Assistant { content } => {
                // The last answer of a turn is its conclusion; earlier ones are narration
                // between tool calls ("Let me look at the tests.").
                if let Some(line) = first_line(content) {
                    note.answered = Some(cut(first_sentence(&line), ANSWERED_CHARS));
                }
            }
            // Reasoning and tool output are what compaction removes first; a system or
            // config event inside a turn is setup, not work.
            Kind::Reasoning { .. } | Kind::System { .. } | Kind::Config { .. } | Kind::Compaction | Kind::Other(_) => {}
        }
    }
    notes
}

impl TurnNote {
    fn render(&self, form: Form) -> String {
        let (max_files, max_commands) = form.lists;
        let mut parts = Vec::new();
        if let Some(asked) = &self.asked {
            parts.push(format!("asked \"{asked}\""));
        }
        if !self.tools.is_empty() {
            let tools: Vec<String> = self.tools.iter().map(|(name, n)| format!("{name}×{n}")).collect();
            parts.push(format!("tools: {}", tools.join(", ")));
        }
        for (label, files) in USE_LABELS.iter().zip(&self.files) {
            if !files.is_empty() {
                parts.push(format!("{label}: {}", listed(files, max_files)));
            }
        }
        if !self.commands.is_empty() {
            let ran: Vec<String> = self.commands.iter().map(|(c, o, failed)| ran(c, o.as_ref(), *failed)).collect();
            parts.push(format!("ran: {}", listed(&ran, max_commands)));
        }
        if !self.errors.is_empty() {
            let errors: Vec<String> = self.errors.iter().map(|(what, line)| format!("`{what}`: {line}")).collect();
            parts.push(format!("still failing: {}", errors.join("; ")));
        }
        let met = self.answered_errors();
        if form.met && !met.is_empty() {
            parts.push(format!("met: {}", met.join("; ")));
        }
        if !self.commits.is_empty() {
            parts.push(format!("committed: {}", self.commits.join(", ")));
        }
        if let Some(answered) = &self.answered {
            parts.push(format!("answered \"{answered}\""));
        }
        let label = if self.partial { format!("turn {} (part)", self.turn) } else { format!("turn {}", self.turn) };
        if parts.is_empty() { format!("{label}: nothing to note") } else { format!("{label}: {}", parts.join("; ")) }
    }
}

impl TurnNote {
    /// The error lines met that `still failing` does not already name.
    fn answered_errors(&self) -> Vec<&str> {
        self.met.iter().filter(|m| !self.errors.iter().any(|(_, l)| l == *m)).map(String::as_str).collect()
    }

    /// The line in its densest form, for a line shown in part: the request, the commands
    /// (their first [`DENSE_COMMAND_CHARS`] characters, no outcome), the files, the
    /// commits, and with `errors_too` the errors (last: as much of them as the room takes);
    /// `lists` bounds the files and commands named.
    fn dense(&self, (max_files, max_commands): (usize, usize), errors_too: bool) -> String {
        let mut parts = Vec::new();
        if let Some(asked) = &self.asked {
            parts.push(format!("asked \"{asked}\""));
        }
        if !self.commands.is_empty() {
            let ran: Vec<String> = self
                .commands
                .iter()
                .map(|(c, _, _)| format!("`{}`", c.chars().take(DENSE_COMMAND_CHARS).collect::<String>()))
                .collect();
            parts.push(format!("ran: {}", listed(&ran, max_commands)));
        }
        for (label, files) in USE_LABELS.iter().zip(&self.files) {
            if !files.is_empty() {
                parts.push(format!("{label}: {}", listed(files, max_files)));
            }
        }
        if !self.commits.is_empty() {
            parts.push(format!("committed: {}", self.commits.join(", ")));
        }
        let errors: Vec<&str> = self.errors.iter().map(|(_, l)| l.as_str()).chain(self.answered_errors()).collect();
        if errors_too && !errors.is_empty() {
            parts.push(format!("errors: {}", errors.join("; ")));
        }
        let label = if self.partial { format!("turn {} (part)", self.turn) } else { format!("turn {}", self.turn) };
        if parts.is_empty() { format!("{label}: nothing to note") } else { format!("{label}: {}", parts.join("; ")) }
    }
}

/// `items` joined, the first `max` of them, the rest counted as `+N more`.
fn listed(items: &[String], max: usize) -> String {
    let shown = items.len().min(max);
    let mut out = items[..shown].join(", ");
    if items.len() > shown {
        out += &format!(" +{} more", items.len() - shown);
    }
    out
}

/// A command as the digest lists it: `` `cargo test` (exit 101) ``; a failure without an
/// exit status says so; its error line is under `still failing` while no later run passed.
fn ran(command: &str, outcome: Option<&Outcome>, failed: bool) -> String {
    match (outcome.and_then(|o| o.exit), failed) {
        (Some(code), _) => format!("`{command}` (exit {code})"),
        (None, true) => format!("`{command}` (failed)"),
        (None, false) => format!("`{command}`"),
    }
}

/// File paths named in tool arguments. Arguments are JSON, or JSON in a string (the OpenAI
/// wire format sends them so, and some importers keep that).
fn paths_in(value: &Value, depth: usize, found: &mut Vec<String>) {
    if depth > MAX_DEPTH {
        return;
    }
    fn push(v: &Value, found: &mut Vec<String>) {
        if let Some(path) = v.as_str().and_then(first_line) {
            found.push(cut(&path, PATH_CHARS));
        }
    }
    match value {
        Value::String(s) if depth == 0 && s.trim_start().starts_with('{') => {
            if let Ok(parsed) = serde_json::from_str::<Value>(s) {
                paths_in(&parsed, depth + 1, found);
            }
        }
        Value::Object(map) => {
            for (key, v) in map {
                if PATH_KEYS.contains(&key.as_str()) {
                    push(v, found);
                } else if PATHS_KEYS.contains(&key.as_str()) {
                    v.as_array().into_iter().flatten().for_each(|p| push(p, found));
                } else {
                    paths_in(v, depth + 1, found);
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|v| paths_in(v, depth + 1, found)),
        _ => {}
    }
}

/// The first line of `text` that is not blank, with runs of whitespace made one space.
fn first_line(text: &str) -> Option<String> {
    let line = text.lines().find(|l| !l.trim().is_empty())?;
    Some(line.split_whitespace().collect::<Vec<_>>().join(" "))
}

/// Up to and including the first `.`, `!` or `?` that ends a sentence (one followed by a
/// space or the end), or all of `line`.
fn first_sentence(line: &str) -> &str {
    let mut chars = line.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if matches!(c, '.' | '!' | '?') && chars.peek().is_none_or(|(_, next)| *next == ' ') {
            return &line[..i + c.len_utf8()];
        }
    }
    line
}

/// `text` in at most `max` characters: cut at a word boundary when one is near the end, and
/// marked with `…`. Counts characters, not bytes, so a cut never splits one.
fn cut(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let keep = max.saturating_sub(1);
    let head: String = text.chars().take(keep).collect();
    // A word cut in half reads worse than a few characters lost, unless that loses most.
    let head = match head.rfind(' ') {
        Some(space) if head[..space].chars().count() > keep / 2 => head[..space].trim_end(),
        _ => head.as_str(),
    };
    format!("{head}…")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::event::turn_numbers;

    fn event(n: usize, kind: Kind) -> Event {
        Event { id: format!("e{n}"), ts: "2026-01-01T00:00:00Z".into(), kind, extra: Default::default() }
    }

    fn user(text: &str) -> Kind {
        Kind::User { content: text.into() }
    }
    fn assistant(text: &str) -> Kind {
        Kind::Assistant { content: text.into() }
    }
    fn call(name: &str, arguments: Value) -> Kind {
        Kind::ToolCall { call_id: "c".into(), name: name.into(), arguments }
    }
    fn result(text: &str) -> Kind {
        Kind::ToolResult { call_id: "c".into(), content: text.into(), is_error: false }
    }

    fn events(kinds: Vec<Kind>) -> Vec<Event> {
        kinds.into_iter().enumerate().map(|(n, k)| event(n, k)).collect()
    }

    /// An agent session: a system prompt, three turns with tool calls, reasoning and
    /// narration between the calls.
    fn session() -> Vec<Event> {
        events(vec![
            Kind::System { content: "You are a coding agent.".into() },
            user("Fix the login redirect\n\nIt loops forever after   sign-in."),
            Kind::Reasoning { content: "Probably the session cookie.".into() },
            call("Read", json!({"file_path": "src/auth.rs"})),
            result("fn login() {}"),
            assistant("Let me look at the login handler too."),
            call("Read", json!({"file_path": "src/login.rs"})),
            result("..."),
            call("Edit", json!({"file_path": "src/auth.rs", "old_string": "a", "new_string": "b"})),
            result("ok"),
            call("Bash", json!({"command": "cargo test"})),
            result("Exit code 101\n   Compiling auth\nerror[E0308]: mismatched types"),
            call("Bash", json!({"command": "cargo clippy"})),
            result("Exit code 1\nwarning: unused"),
            call("Edit", json!({"file_path": "src/auth.rs", "old_string": "b", "new_string": "c"})),
            result("ok"),
            call("Bash", json!({"command": "cargo test"})),
            result("Exit code 0\ntest result: ok. 3 passed"),
            call("Bash", json!({"command": ["git", "commit", "-am", "fix"]})),
            result("[main 1a2b3c4] fix\n 1 file changed"),
            assistant("The redirect loop came from a cookie set on the wrong path. I fixed it in src/auth.rs."),
            user("  \n   Now add a test for it"),
            call("Write", json!({"filePath": "tests/login.rs", "content": "#[test] fn t() {}"})),
            result("ok"),
            call("MultiEdit", json!({"edits": [{"path": "src/a.rs"}, {"path": "src/b.rs"}]})),
            result("ok"),
            call("Glob", json!({"paths": ["src/c.rs", "src/d.rs", "src/a.rs", "src/e.rs"]})),
            result("ok"),
            assistant("Added tests/login.rs!\nIt covers the loop."),
            user("thanks"),
            assistant("You're welcome"),
        ])
    }

    #[test]
    fn a_slash_command_turn_records_the_request_typed_not_the_template() {
        let events = events(vec![
            user(
                "<command-message>orchestrator is running…</command-message>\n\
                 <command-name>/orchestrator</command-name>\n\
                 <command-args>update CLAUDE.md</command-args>",
            ),
            user("Split complex tasks into independent subtasks.\n\n## Process"),
            assistant("Updated."),
            user("thanks"),
        ]);
        let text = digest(&events, &turn_numbers(&events), 2000);
        assert_eq!(
            text,
            "Digest of turns 0-2 (written by convo, no model):\n\
             turn 0: asked \"/orchestrator update CLAUDE.md\"\n\
             turn 1: asked \"/orchestrator update CLAUDE.md\"; answered \"Updated.\"\n\
             turn 2: asked \"thanks\""
        );
    }

    #[test]
    fn a_session_gets_one_line_per_turn() {
        let events = session();
        let text = digest(&events, &turn_numbers(&events), 2000);
        assert_eq!(
            text,
            "Digest of turns 0-2 (written by convo, no model):\n\
             turn 0: asked \"Fix the login redirect\"; tools: Read×2, Edit×2, Bash×4; \
             read: src/auth.rs, src/login.rs; edited: src/auth.rs; \
             ran: `cargo test` (exit 0), `cargo clippy` (exit 1), `git commit -am fix`; \
             still failing: `cargo clippy`: warning: unused; committed: 1a2b3c4; \
             answered \"The redirect loop came from a cookie set on the wrong path.\"\n\
             turn 1: asked \"Now add a test for it\"; tools: Write×1, MultiEdit×1, Glob×1; \
             edited: src/a.rs, src/b.rs; created: tests/login.rs; files: src/c.rs, src/d.rs, src/a.rs, src/e.rs; \
             answered \"Added tests/login.rs!\"\n\
             turn 2: asked \"thanks\"; answered \"You're welcome\""
        );
        // Deterministic: the same events give the same text.
        assert_eq!(digest(&events, &turn_numbers(&events), 2000), text);
    }

    #[test]
    fn a_budget_digest_lists_every_command_and_fills_the_room_it_is_given() {
        // One turn of twenty commands: the usual digest names eight.
        let mut kinds = vec![user("set it up")];
        for n in 0..20 {
            kinds.push(call("Bash", serde_json::json!({"command": format!("make step{n}")})));
            kinds.push(result("ok"));
        }
        let events: Vec<Event> = kinds.into_iter().enumerate().map(|(n, k)| event(n, k)).collect();
        let turns = turn_numbers(&events);
        let usual = digest(&events, &turns, 10_000);
        assert!(usual.contains("+12 more"), "{usual}");
        let whole = fitted(&events, &turns, 10_000);
        assert!((0..20).all(|n| whole.contains(&format!("`make step{n}`"))), "{whole}");
        // Too little room for the one line whole: as many of each list as fit, within it.
        let budget = tokens(whole.chars().count() as u64) / 2;
        let half = fitted(&events, &turns, budget);
        assert!(tokens(half.chars().count() as u64) <= budget, "{half}");
        let named = (0..20).filter(|n| half.contains(&format!("`make step{n}`"))).count();
        assert!(named >= 4, "{half}");
        assert!(!half.contains("left out"), "{half}");
        // The usual digest at that budget leaves the line out and names none.
        assert_eq!((0..20).filter(|n| digest(&events, &turns, budget).contains(&format!("step{n}`"))).count(), 0);
    }

    #[test]
    fn a_budget_digest_names_the_errors_met_on_the_way_when_every_line_fits() {
        let events = session();
        let turns = turn_numbers(&events);
        // `cargo test` failed, then passed: no longer failing, but met.
        let met = "met: error[E0308]: mismatched types";
        assert!(fitted(&events, &turns, 10_000).contains(met));
        assert!(!digest(&events, &turns, 10_000).contains("E0308"));
        // Not at the price of a line: too little room for every line with them, none.
        let whole = bounded(&events, &turns, 10_000, Form { lists: (usize::MAX, usize::MAX), met: false }, true).0;
        let tight = fitted(&events, &turns, tokens(whole.chars().count() as u64));
        assert_eq!(tight, whole);
    }

    #[test]
    fn a_line_shown_in_part_names_every_command_before_the_files() {
        // One turn reading twenty files of long paths and running twenty commands.
        let mut kinds = vec![user("set it up")];
        for n in 0..20 {
            kinds.push(call("Read", json!({"file_path": format!("src/a/long/directory/name/for/module_{n}.rs")})));
            kinds.push(result("ok"));
            kinds.push(call("Bash", json!({"command": format!("make step{n}")})));
            kinds.push(result("ok"));
        }
        let events = events(kinds);
        let turns = turn_numbers(&events);
        let whole = fitted(&events, &turns, 10_000);
        let budget = tokens(whole.chars().count() as u64) / 2;
        let half = fitted(&events, &turns, budget);
        assert!(tokens(half.chars().count() as u64) <= budget, "{half}");
        assert!((0..20).all(|n| half.contains(&format!("`make step{n}`"))), "{half}");
        assert!(half.contains("module_0.rs"), "the room left takes files: {half}");
    }

    #[test]
    fn a_filled_digest_spends_its_room_on_the_end_of_its_range() {
        let events = session();
        let turns = turn_numbers(&events);
        let lines = fitted(&events, &turns, 10_000);
        // Room for everything: every event's text, in order, after the lines.
        let all = filled(&events, &turns, 10_000);
        assert!(all.starts_with(&format!("{lines}\nThe range ends (as it was, oldest first):\n")), "{all}");
        assert!(all.ends_with("\nuser: thanks\nassistant: You're welcome"), "{all}");
        assert!(all.contains("output: Exit code 101 Compiling auth error[E0308]: mismatched types"), "{all}");
        // Some room: filled close to it, never over, the newest text kept.
        let cap = tokens(lines.chars().count() as u64) + 60;
        let some = filled(&events, &turns, cap);
        let used = tokens(some.chars().count() as u64);
        assert!(used <= cap && used >= cap - 6, "{used} of {cap}: {some}");
        assert!(some.ends_with("assistant: You're welcome"), "{some}");
        // No room: the lines alone.
        assert_eq!(filled(&events, &turns, tokens(lines.chars().count() as u64)), lines);
    }

    #[test]
    fn over_budget_the_oldest_lines_go_first_and_are_counted() {
        let events: Vec<Event> = (0..10)
            .flat_map(|t| [user(&format!("request number {t}")), assistant(&format!("Done with {t}."))])
            .enumerate()
            .map(|(n, k)| event(n, k))
            .collect();
        let turns = turn_numbers(&events);
        let full = digest(&events, &turns, 10_000);
        assert_eq!(full.lines().count(), 11);
        let budget = 60;
        let text = digest(&events, &turns, budget);
        assert!(tokens(text.chars().count() as u64) <= budget, "{text}");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "Digest of turns 0-9 (written by convo, no model):");
        let dropped = 10 - (lines.len() - 2);
        assert_eq!(lines[1], format!("[{dropped} earlier turns left out]"));
        // What is kept is the newest lines, whole and in order.
        assert_eq!(lines[2..], full.lines().skip(1 + dropped).collect::<Vec<_>>()[..]);
        assert_eq!(lines.last(), Some(&"turn 9: asked \"request number 9\"; answered \"Done with 9.\""));
        // One more token of budget never keeps fewer lines.
        assert!(digest(&events, &turns, budget + 1).lines().count() >= lines.len());
        // No budget at all: only the header and the count remain.
        assert_eq!(
            digest(&events, &turns, 0),
            "Digest of turns 0-9 (written by convo, no model):\n[10 earlier turns left out]"
        );
    }

    #[test]
    fn a_range_that_starts_inside_a_turn_notes_the_part_present() {
        let all = session();
        let turns = turn_numbers(&all);
        // From the second Edit of turn 0 to the first result of turn 1.
        let text = digest(&all[14..24], &turns[14..24], 2000);
        assert_eq!(
            text,
            "Digest of turns 0-1 (written by convo, no model):\n\
             turn 0 (part): tools: Edit×1, Bash×2; edited: src/auth.rs; \
             ran: `cargo test` (exit 0), `git commit -am fix`; committed: 1a2b3c4; \
             answered \"The redirect loop came from a cookie set on the wrong path.\"\n\
             turn 1: asked \"Now add a test for it\"; tools: Write×1; created: tests/login.rs"
        );
        // Only tool results: the turn is still listed.
        assert_eq!(
            digest(&all[15..16], &turns[15..16], 2000),
            "Digest of turn 0 (written by convo, no model):\nturn 0 (part): nothing to note"
        );
        // Only a system prompt: no turn at all.
        assert_eq!(digest(&all[..1], &turns[..1], 2000), "Digest (written by convo, no model): no turns");
    }

    #[test]
    fn cuts_count_characters_and_never_split_one() {
        let long = "é".repeat(300);
        let events = events(vec![
            user(&format!("{long} {long}")),
            call("Read", json!(format!("{{\"path\": \"{}\"}}", "日".repeat(150)))),
            assistant(&"🦀".repeat(200)),
        ]);
        let text = digest(&events, &turn_numbers(&events), 2000);
        let line = text.lines().nth(1).unwrap_or_default();
        // 99 characters and the ellipsis, for each; no space near the end to cut at.
        assert!(line.contains(&format!("asked \"{}…\"", "é".repeat(99))), "{line}");
        assert!(line.contains(&format!("read: {}…", "日".repeat(99))), "{line}");
        assert!(line.contains(&format!("answered \"{}…\"", "🦀".repeat(119))), "{line}");
        // A word boundary near the end is preferred to a cut word.
        assert_eq!(cut("aaaa bbbb cccc", 12), "aaaa bbbb…");
        assert_eq!(cut("aaaaaaaaaa bbbb", 12), "aaaaaaaaaa…");
        assert_eq!(cut("short", 12), "short");
    }

    #[test]
    fn sentences_end_at_punctuation_before_a_space() {
        assert_eq!(first_sentence("Fixed src/auth.rs. Then ran tests."), "Fixed src/auth.rs.");
        assert_eq!(first_sentence("Version 1.2 is out"), "Version 1.2 is out");
        assert_eq!(first_sentence("Done!"), "Done!");
    }
}
