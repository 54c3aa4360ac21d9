//! The trail: what an agent did, as a compacted view must still tell it. Which files it read
//! and changed, which commands it ran and how they ended, which errors it met, what it
//! committed. Factory's evaluation of compactors found this the weakest part of every
//! method; here it is read off the events twice:
//!
//! - per event, for the placeholders a compaction leaves ([`short_args`] of a call,
//!   [`Outcome`] of a result), small enough to live in an outline;
//! - per range, as a list of strings ([`Trail`]) whose presence in a view or a summary is
//!   what "kept" means: a summary that drops some is asked again, and the `compaction_cut`
//!   bench reports the share each policy keeps.

use std::sync::LazyLock;

use regex::Regex;
use serde_json::Value;

use super::{Event, Kind};

/// Characters of an argument's value a placeholder keeps; a longer value is cut there and
/// ends with `…`.
pub const ARG_MAX: usize = 160;
/// Characters kept of a value of several lines (a heredoc, a patch, code): its first line,
/// or this many characters when the first line is shorter. A command's first characters
/// are what identifies it; the rest is what it writes.
pub const MULTILINE_MAX: usize = 64;
/// Characters of an error line a placeholder keeps.
pub const LINE_MAX: usize = 200;
/// Commit ids a placeholder names, at most.
const COMMITS_MAX: usize = 3;

/// What reads like an error in a tool's output (the words the trail measure looks for).
static ERROR_WORD: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?i)error|failed|panic|traceback|exception").expect("a valid regex"));
/// How shells and agents report an exit status at the top of an output: Claude Code's
/// `Exit code 1`, Codex's `Exit code: 1` and `Process exited with code 1`, or a
/// `"exit_code": 1` in Codex's JSON output.
static EXIT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"(?m)^(?:Exit code:? |Process exited with code )(-?\d+)\b|"exit_code"\s*:\s*(-?\d+)"#)
        .expect("a valid regex")
});
/// A commit git reports: `[main 1a2b3c4] subject` (commit, merge, cherry-pick) or
/// `commit 1a2b3c4…` (log, show).
static COMMIT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\[[^\]\s]+(?: \(root-commit\))? ([0-9a-f]{7,40})\]|(?m)^commit ([0-9a-f]{7,40})\b")
        .expect("a valid regex")
});
/// A file path in prose: a word with a slash, or a name with a common source extension.
static PATH: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?:[\w.~-]*/)+[\w.-]+\.\w{1,5}\b|\b[\w-]+\.(?:rs|py|js|ts|tsx|jsx|go|md|toml|json|ya?ml|sh|c|h|cc|cpp|hpp|java|kt|rb|txt|lock|html|css)\b",
    )
    .expect("a valid regex")
});
/// Argument keys that name a file, in the agents' tools.
const PATH_KEYS: &[&str] = &["file_path", "path", "notebook_path"];
/// Argument keys that hold a shell command (Claude Code's `Bash`, Codex's `shell` and
/// `exec_command`).
pub const COMMAND_KEYS: &[&str] = &["command", "cmd"];
/// Characters of a command the trail measure compares.
const COMMAND_PREFIX: usize = 60;

/// A call's arguments that a placeholder may keep: each top-level string (an array of
/// strings joined with spaces, as Codex's `shell` command), in the call's order, cut to
/// [`ARG_MAX`] characters ([`MULTILINE_MAX`] or its first line for a value of several
/// lines). Numbers, objects and empty strings identify nothing and are left
/// out.
pub fn short_args(arguments: &Value) -> Vec<(String, String)> {
    let Value::Object(map) = arguments else { return Vec::new() };
    map.iter().filter_map(|(key, value)| Some((key.clone(), short_value(value)?))).collect()
}

fn short_value(value: &Value) -> Option<String> {
    let text = match value {
        Value::String(s) => s.clone(),
        Value::Array(items) if !items.is_empty() && items.iter().all(Value::is_string) => {
            items.iter().filter_map(Value::as_str).collect::<Vec<_>>().join(" ")
        }
        _ => return None,
    };
    if text.trim().is_empty() {
        return None;
    }
    let first_line = text.find('\n').map(|at| text[..at].chars().count());
    let max = match first_line {
        Some(chars) => chars.clamp(MULTILINE_MAX, ARG_MAX),
        None => ARG_MAX,
    };
    Some(cut(&text, max))
}

/// `text` up to `max` characters, with `…` where it was cut.
pub fn cut(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_owned(),
    }
}

/// How a tool call ended, as its result tells: the exit status an agent printed, the
/// first line that reads like an error (for a failure without one, its first line), and
/// the commits git reported.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Outcome {
    pub exit: Option<i64>,
    pub error_line: Option<String>,
    pub commits: Vec<String>,
}

impl Outcome {
    /// The outcome of a result with `content`, flagged `is_error` by its agent.
    pub fn of(content: &str, is_error: bool) -> Outcome {
        let (content, recorded) = output_of(content);
        let exit = recorded.or_else(|| printed_exit(&content));
        let content = content.as_ref();
        let failed = is_error || exit.is_some_and(|code| code != 0);
        let error_line = first_error_line(content)
            .or_else(|| {
                // The first line that says more than the exit status.
                let said = |l: &&str| !l.is_empty() && !EXIT.is_match(l);
                failed.then(|| content.lines().map(str::trim).find(said)).flatten()
            })
            .map(|line| cut(line, LINE_MAX));
        let mut commits: Vec<String> = Vec::new();
        for found in COMMIT.captures_iter(content) {
            if let Some(id) = found.get(1).or_else(|| found.get(2))
                && !commits.iter().any(|c| c == id.as_str())
            {
                commits.push(id.as_str().to_owned());
                if commits.len() == COMMITS_MAX {
                    break;
                }
            }
        }
        Outcome { exit, error_line, commits }
    }

    /// Whether the call failed: an error flag, or a non-zero exit status.
    pub fn failed(&self, is_error: bool) -> bool {
        is_error || self.exit.is_some_and(|code| code != 0)
    }
}

/// The exit status a result's output reports, read as [`Outcome`] reads it: recorded in
/// Codex's JSON ([`output_of`]), else printed in its first lines ([`EXIT`]). The one
/// reading, so that a placeholder and an importer that has no error flag to go by (Codex
/// writes none) agree on what failed.
pub fn exit_status(content: &str) -> Option<i64> {
    let (output, recorded) = output_of(content);
    recorded.or_else(|| printed_exit(&output)).or_else(|| gemini_exit(&output))
}

/// Gemini CLI's shell result: `Output: …` (in `<untrusted_context>` since 0.6x), then an
/// `Exit Code: N` line after the output, however long it is. Read only in a result of
/// that shape, so a line of a command's own output is never taken for it.
fn gemini_exit(content: &str) -> Option<i64> {
    let body = content.strip_prefix("<untrusted_context>\n").unwrap_or(content);
    if !(body.starts_with("Output: ") || body.starts_with("Command: ")) {
        return None;
    }
    GEMINI_EXIT.captures_iter(body).last()?.get(1)?.as_str().parse().ok()
}

static GEMINI_EXIT: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"(?m)^Exit Code: (-?\d+)$").expect("a valid regex"));

/// The exit status printed at the top of an output (or anywhere in JSON's text).
fn printed_exit(content: &str) -> Option<i64> {
    EXIT.captures(head(content)).and_then(|c| c.get(1).or_else(|| c.get(2))).and_then(|m| m.as_str().parse().ok())
}

/// The text a result's output is, and the exit status it records: Codex writes a shell
/// call's output as JSON (`{"output": "...", "metadata": {"exit_code": 1}}`, or the
/// status beside the output), whose lines are what an error line is looked for in;
/// anything else is its own text.
pub fn output_of(content: &str) -> (std::borrow::Cow<'_, str>, Option<i64>) {
    if content.starts_with('{')
        && let Ok(Value::Object(o)) = serde_json::from_str::<Value>(content)
        && let Some(Value::String(output)) = o.get("output")
    {
        let recorded = o.get("metadata").and_then(|m| m.get("exit_code")).or_else(|| o.get("exit_code"));
        return (std::borrow::Cow::Owned(output.clone()), recorded.and_then(Value::as_i64));
    }
    (std::borrow::Cow::Borrowed(content), None)
}

/// Where an exit status is looked for: the first lines, and Codex's JSON metadata (which
/// may follow a long output, so the whole text when it is JSON).
fn head(content: &str) -> &str {
    if content.starts_with('{') {
        return content;
    }
    let end = content.match_indices('\n').nth(2).map_or(content.len(), |(at, _)| at);
    &content[..end]
}

/// The first line of `content` that reads like an error, trimmed. For a Python traceback,
/// the exception it ends with: Python prints the stack first and what went wrong last, and
/// its header says nothing a reader can act on.
pub fn first_error_line(content: &str) -> Option<&str> {
    let found = ERROR_WORD.find(content)?;
    let start = content[..found.start()].rfind('\n').map_or(0, |at| at + 1);
    let end = content[found.end()..].find('\n').map_or(content.len(), |at| found.end() + at);
    let line = content[start..end].trim();
    match line.starts_with(TRACEBACK) {
        true => Some(raised(&content[end..]).unwrap_or(line)),
        false => Some(line),
    }
}

/// What starts a Python traceback.
const TRACEBACK: &str = "Traceback (most recent call last):";
/// What joins two tracebacks of a chained exception: the one raised is the last.
const CHAINED: [&str; 2] = ["During handling of the above exception", "The above exception was the direct cause"];

/// The exception a traceback's stack (`after` its header) ends with: its first unindented
/// line, or the last traceback's when exceptions are chained. None for a cut-off traceback.
fn raised(after: &str) -> Option<&str> {
    let (mut raised, mut in_stack) = (None, true);
    for line in after.lines() {
        if line.trim().is_empty() || line.starts_with(char::is_whitespace) {
            continue;
        }
        let line = line.trim_end();
        if line.starts_with(TRACEBACK) {
            in_stack = true;
        } else if in_stack {
            (raised, in_stack) = (Some(line), false);
        } else if !CHAINED.iter().any(|c| line.starts_with(c)) {
            break;
        }
    }
    raised
}

/// The text of a view a trail item is looked for in (by `compact --dry-run` and the
/// `compaction_cut` bench): every message and result, and each
/// call's name and the strings of its arguments (decoded: a command with quotes reads as
/// the agent typed it).
pub fn text_of(view: &[Event]) -> String {
    fn strings(value: &serde_json::Value, out: &mut String) {
        match value {
            serde_json::Value::String(s) => {
                out.push_str(s);
                out.push('\n');
            }
            // An argv reads as the command line it is (Codex's `shell`).
            serde_json::Value::Array(items) if items.iter().all(serde_json::Value::is_string) => {
                let argv: Vec<&str> = items.iter().filter_map(serde_json::Value::as_str).collect();
                out.push_str(&argv.join(" "));
                out.push('\n');
            }
            serde_json::Value::Array(items) => items.iter().for_each(|v| strings(v, out)),
            serde_json::Value::Object(map) => map.values().for_each(|v| strings(v, out)),
            _ => {}
        }
    }
    let mut out = String::new();
    for e in view {
        match &e.kind {
            Kind::ToolCall { name, arguments, .. } => {
                out.push_str(name);
                out.push('\n');
                strings(arguments, &mut out);
            }
            Kind::System { content }
            | Kind::User { content }
            | Kind::Assistant { content }
            | Kind::Reasoning { content }
            | Kind::ToolResult { content, .. } => {
                out.push_str(content);
                out.push('\n');
            }
            _ => {}
        }
    }
    out
}

/// What one item of a trail is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Mark {
    /// A file path a call's argument or a message names.
    File,
    /// A shell command's first [`COMMAND_PREFIX`] characters.
    Command,
    /// The first line of a result that reads like an error.
    Error,
    /// A commit id git printed.
    Commit,
}

impl Mark {
    pub const ALL: [Mark; 4] = [Mark::File, Mark::Command, Mark::Error, Mark::Commit];

    pub fn name(self) -> &'static str {
        match self {
            Mark::File => "files",
            Mark::Command => "commands",
            Mark::Error => "errors",
            Mark::Commit => "commits",
        }
    }
}

/// The trail of a run of events: each string once, in the order first met.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Trail {
    pub items: Vec<(Mark, String)>,
}

impl Trail {
    /// The trail as the `compaction_cut` bench measures it: every result's first line that
    /// reads like an error counts, a file's text or a search hit included.
    pub fn of<'a>(events: impl IntoIterator<Item = &'a Event>) -> Trail {
        Trail::with(events, true)
    }

    /// The trail a hand-off must keep: error lines only of failures and of commands' output
    /// (in a file read, a line that says `error` is code, not news).
    pub fn worth_keeping<'a>(events: impl IntoIterator<Item = &'a Event>) -> Trail {
        Trail::with(events, false)
    }

    fn with<'a>(events: impl IntoIterator<Item = &'a Event>, every_error: bool) -> Trail {
        let mut trail = Trail::default();
        // The calls that run a command, by call id.
        let mut commands: std::collections::HashSet<&str> = std::collections::HashSet::new();
        for event in events {
            match &event.kind {
                Kind::User { content } | Kind::Assistant { content } => {
                    for path in PATH.find_iter(content) {
                        trail.add(Mark::File, path.as_str());
                    }
                }
                Kind::ToolCall { call_id, arguments: Value::Object(args), .. } => {
                    if COMMAND_KEYS.iter().any(|k| args.contains_key(*k)) {
                        commands.insert(call_id);
                    }
                    for key in PATH_KEYS {
                        if let Some(Value::String(path)) = args.get(*key) {
                            trail.add(Mark::File, path);
                        }
                    }
                    for key in COMMAND_KEYS {
                        if let Some(command) = args.get(*key).and_then(short_value) {
                            let command: String = command.chars().take(COMMAND_PREFIX).collect();
                            trail.add(Mark::Command, command.trim_end_matches('…'));
                        }
                    }
                }
                Kind::ToolResult { call_id, content, is_error } => {
                    let counts = every_error
                        || commands.contains(call_id.as_str())
                        || Outcome::of(content, *is_error).failed(*is_error);
                    let (content, _) = output_of(content);
                    if let Some(line) = first_error_line(&content).filter(|_| counts) {
                        trail.add(Mark::Error, line);
                    }
                    for found in COMMIT.captures_iter(&content) {
                        if let Some(id) = found.get(1).or_else(|| found.get(2)) {
                            trail.add(Mark::Commit, id.as_str());
                        }
                    }
                }
                _ => {}
            }
        }
        trail
    }

    fn add(&mut self, mark: Mark, text: &str) {
        let text = text.trim();
        if !text.is_empty() && !self.items.iter().any(|(m, t)| *m == mark && t == text) {
            self.items.push((mark, text.to_owned()));
        }
    }

    /// The items `text` does not contain.
    pub fn missing_from<'a>(&'a self, text: &str) -> Vec<&'a (Mark, String)> {
        self.items.iter().filter(|(_, item)| !text.contains(item.as_str())).collect()
    }

    /// Per mark, how many items `text` contains and how many there are.
    pub fn kept_in(&self, text: &str) -> Vec<(Mark, usize, usize)> {
        Mark::ALL
            .iter()
            .map(|mark| {
                let of_mark = self.items.iter().filter(|(m, _)| m == mark);
                let total = of_mark.clone().count();
                let kept = of_mark.filter(|(_, item)| text.contains(item.as_str())).count();
                (*mark, kept, total)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Gemini CLI 0.61's own record of `ls /nonexistent-dir` (a real run against the
    /// recording server), and its other shapes: the status after the output, however long.
    #[test]
    fn a_gemini_cli_shell_result_says_its_exit_code_after_its_output() {
        let real = "<untrusted_context>\nOutput: ls: cannot access '/nonexistent-dir': No such file or directory\nExit Code: 2\nProcess Group PGID: 5729\n</untrusted_context>";
        assert_eq!(exit_status(real), Some(2));
        let long =
            format!("Command: make\nDirectory: (root)\nOutput: {}\nError: (none)\nExit Code: 0\n", "line\n".repeat(50));
        assert_eq!(exit_status(&long), Some(0));
        // Only in that shape: a line of some other output is not its status.
        assert_eq!(exit_status("building\nstep 2\nstep 3\nExit Code: 1"), None);
        assert_eq!(exit_status("<untrusted_context>\nfile contents\nExit Code: 1\n</untrusted_context>"), None);
    }

    #[test]
    fn short_args_keep_strings_and_joined_commands_cut_at_the_bound() {
        let long = "x".repeat(ARG_MAX + 10);
        let heredoc = format!("cat > a.md << 'EOF'\n{}\nEOF", "text ".repeat(40));
        let args = serde_json::json!({"command": ["bash", "-lc", "ls"], "n": 3, "file_path": "a.rs", "body": long, "e": "", "h": heredoc});
        let short = short_args(&args);
        assert_eq!(short[0], ("command".into(), "bash -lc ls".into()));
        assert_eq!(short[1], ("file_path".into(), "a.rs".into()));
        assert_eq!(short[2].1.chars().count(), ARG_MAX + 1);
        assert!(short[2].1.ends_with('…'));
        assert_eq!(short[3].1.chars().count(), MULTILINE_MAX + 1, "{short:?}");
        assert!(short[3].1.starts_with("cat > a.md << 'EOF'\ntext text"));
        assert_eq!(short.len(), 4, "numbers and empty strings are not kept");
    }

    #[test]
    fn a_python_traceback_is_told_by_the_exception_it_ends_with() {
        let traceback = "Exit code 1\nTraceback (most recent call last):\n  File \"/app/run.py\", line 3, in <module>\n    main()\n    ~~~~^^\n  File \"/app/run.py\", line 2, in main\n    def main(): int(\"x\")\nValueError: invalid literal for int() with base 10: 'x'\n";
        let out = Outcome::of(traceback, true);
        assert_eq!(out.error_line.as_deref(), Some("ValueError: invalid literal for int() with base 10: 'x'"));
        let chained = "Traceback (most recent call last):\n  File \"a.py\", line 1, in <module>\nKeyError: 'k'\n\nDuring handling of the above exception, another exception occurred:\n\nTraceback (most recent call last):\n  File \"a.py\", line 3, in <module>\nRuntimeError: no config\n";
        assert_eq!(first_error_line(chained), Some("RuntimeError: no config"), "the exception raised last");
        let cut_off = "Traceback (most recent call last):\n  File \"a.py\", line 1, in <module>\n";
        assert_eq!(first_error_line(cut_off), Some("Traceback (most recent call last):"), "nothing better to say");
        let after = "collected 3 items\nTraceback (most recent call last):\n  File \"t.py\", line 9\nAssertionError\n3 failed\n";
        assert_eq!(first_error_line(after), Some("AssertionError"));
        let rust = "error[E0308]: mismatched types\nTraceback (most recent call last):\nValueError: later";
        assert_eq!(first_error_line(rust), Some("error[E0308]: mismatched types"), "other outputs as before");
    }

    #[test]
    fn an_outcome_reads_exit_status_error_line_and_commits() {
        let out = Outcome::of("Exit code 101\n   Compiling x\nerror[E0308]: mismatched types\n  --> a.rs", true);
        assert_eq!(out.exit, Some(101));
        assert_eq!(out.error_line.as_deref(), Some("error[E0308]: mismatched types"));
        let codex = Outcome::of(r#"{"output":"ok\n","metadata":{"exit_code":0,"duration_seconds":0.1}}"#, false);
        assert_eq!((codex.exit, codex.error_line), (Some(0), None));
        let failed = Outcome::of(r#"{"output":"cc a.c\nerror: no main\n","metadata":{"exit_code":2}}"#, false);
        assert_eq!((failed.exit, failed.error_line.as_deref()), (Some(2), Some("error: no main")));
        let failed = Outcome::of("lsd: 3: No such file\nmore", true);
        assert_eq!(failed.error_line.as_deref(), Some("lsd: 3: No such file"), "a failure's first line");
        let commit = Outcome::of("[main 1a2b3c4] store: fix\n 1 file changed", false);
        assert_eq!(commit.commits, ["1a2b3c4"]);
        assert_eq!(Outcome::of("all good", false), Outcome::default());
        let beside = Outcome::of(r#"{"output":"no such file\n","exit_code":1}"#, false);
        assert_eq!((beside.exit, beside.error_line.as_deref()), (Some(1), Some("no such file")));
    }

    #[test]
    fn an_exit_status_is_read_from_each_shape_as_an_outcome_reads_it() {
        let shapes = [
            ("Exit code 101\n   Compiling x", Some(101)),
            ("Exit code: 1\nWall time: 0.2 seconds\nOutput:\n", Some(1)),
            ("Chunk ID: 6\nWall time: 0.0 seconds\nProcess exited with code 0\nOutput:\nok\n", Some(0)),
            (r#"{"output":"x","metadata":{"exit_code":2}}"#, Some(2)),
            (r#"{"output":"x","exit_code":3}"#, Some(3)),
            (r#"{"exit_code":-1}"#, Some(-1)),
            ("a\nb\nc\nExit code 1", None),
            ("Plan updated", None),
        ];
        for (content, exit) in shapes {
            assert_eq!(exit_status(content), exit, "{content}");
            assert_eq!(Outcome::of(content, false).exit, exit, "{content}");
        }
    }

    #[test]
    fn a_trail_lists_paths_commands_errors_and_commits_once() {
        let mut events = Vec::new();
        let mut push = |kind| events.push(crate::event::Draft::new(kind).into_event("e".into(), "t".into()));
        push(Kind::User { content: "fix src/store/mod.rs please".into() });
        let call = |command: &str| Kind::ToolCall {
            call_id: "c".into(),
            name: "Bash".into(),
            arguments: serde_json::json!({"command": command}),
        };
        push(call("cargo test -p store"));
        push(Kind::ToolResult { call_id: "c".into(), content: "error: oops\nerror: two".into(), is_error: true });
        push(call("cargo test -p store"));
        push(Kind::ToolResult { call_id: "c".into(), content: "[main abcdef1] done".into(), is_error: false });
        let trail = Trail::of(&events);
        let items: Vec<(Mark, &str)> = trail.items.iter().map(|(m, t)| (*m, t.as_str())).collect();
        assert_eq!(
            items,
            [
                (Mark::File, "src/store/mod.rs"),
                (Mark::Command, "cargo test -p store"),
                (Mark::Error, "error: oops"),
                (Mark::Commit, "abcdef1")
            ]
        );
        assert_eq!(trail.missing_from("src/store/mod.rs abcdef1").len(), 2);
    }
}
