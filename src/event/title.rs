//! Titles people recognise. A session is known by what its agent called it, else by what
//! its user first asked: not by its file name (a session id), and not by the wrappers agents
//! put in the user's place (a slash command's markup, a command's output, a system reminder,
//! the environment or instructions an agent sends as a user message). One line, cut at a
//! word.

/// How many characters a title keeps before it is cut (with `…`).
pub const MAX_CHARS: usize = 80;

/// Text an agent sends as a user message that the user did not type: its start, after
/// leading whitespace. Claude Code's slash commands and their output, its caveat before
/// them, its hooks' and reminders' text; Codex's environment, instructions and AGENTS.md.
const WRAPPERS: &[&str] = &[
    "<command-name>",
    "<command-message>",
    "<command-args>",
    "<command-contents>",
    "<local-command-",
    "<system-reminder>",
    "<bash-input>",
    "<bash-stdout>",
    "<bash-stderr>",
    "<user-prompt-submit-hook>",
    "<task-notification>",
    "Caveat: The messages below were generated",
    "[Request interrupted by user",
    "<environment_context>",
    "<user_instructions>",
    "<user_shell_command>",
    "<turn_aborted>",
    "# AGENTS.md instructions for ",
];

/// The marker of an IDE's context before the user's words (Codex in an editor sends
/// `# Context from my IDE setup:` and the open files first).
const IDE_REQUEST: &str = "## My request for Codex:";

/// The title a user message gives, if it is the user's own words: their first line, cut
/// to [`MAX_CHARS`]. `None` for a wrapper or an empty text.
pub fn from_prompt(text: &str) -> Option<String> {
    let text = without_reminders(text);
    let mut text = text.trim_start();
    if let Some(at) = text.find(IDE_REQUEST) {
        text = text[at + IDE_REQUEST.len()..].trim_start();
    }
    if WRAPPERS.iter().any(|w| text.starts_with(w)) {
        return None;
    }
    one_line(text)
}

/// The command line of a Claude Code slash command's markup (`/name args`): a title for a
/// session whose only prompt was a command.
pub fn from_command(text: &str) -> Option<String> {
    let name = between(text, "<command-name>", "</command-name>")?.trim();
    if name.is_empty() {
        return None;
    }
    let name = if name.starts_with('/') { name.to_owned() } else { format!("/{name}") };
    let args = between(text, "<command-args>", "</command-args>").unwrap_or_default().trim();
    one_line(&if args.is_empty() { name } else { format!("{name} {args}") })
}

/// A title the agent recorded (a summary, a name the user gave), as one line.
pub fn from_record(text: &str) -> Option<String> {
    one_line(text)
}

/// The first non-blank line of `text`, whitespace runs made one space, cut to
/// [`MAX_CHARS`] characters at a word (a word longer than half of that is cut inside),
/// `…` marking the cut. `None` when there is no such line.
pub fn one_line(text: &str) -> Option<String> {
    let line = text.lines().map(str::trim).find(|l| !l.is_empty())?;
    let words: Vec<&str> = line.split_whitespace().collect();
    let line = words.join(" ");
    if line.chars().count() <= MAX_CHARS {
        return Some(line);
    }
    // Room for the ellipsis.
    let limit = MAX_CHARS - 1;
    let end = line.char_indices().nth(limit).map_or(line.len(), |(i, _)| i);
    let head = &line[..end];
    let cut = match head.rfind(' ') {
        Some(space) if head[..space].chars().count() >= MAX_CHARS / 2 => &head[..space],
        _ => head,
    };
    Some(format!("{}…", cut.trim_end()))
}

/// `text` without `<system-reminder>…</system-reminder>` blocks, which Claude Code adds
/// to a user's message; an unclosed one runs to the end.
fn without_reminders(text: &str) -> std::borrow::Cow<'_, str> {
    const OPEN: &str = "<system-reminder>";
    const CLOSE: &str = "</system-reminder>";
    if !text.contains(OPEN) {
        return text.into();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find(OPEN) {
        out.push_str(&rest[..start]);
        rest = match rest[start..].find(CLOSE) {
            Some(end) => &rest[start + end + CLOSE.len()..],
            None => "",
        };
    }
    out.push_str(rest);
    out.into()
}

fn between<'t>(text: &'t str, open: &str, close: &str) -> Option<&'t str> {
    let start = text.find(open)? + open.len();
    let end = text[start..].find(close)?;
    Some(&text[start..start + end])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prompt_becomes_its_first_line() {
        assert_eq!(from_prompt("\n  Fix the  parser\nIt breaks on tabs.").as_deref(), Some("Fix the parser"));
        assert_eq!(from_prompt("   \n\n"), None);
    }

    #[test]
    fn a_long_line_is_cut_at_a_word_with_an_ellipsis() {
        let long = "word ".repeat(40);
        let title = one_line(&long).unwrap();
        assert!(title.ends_with("word…"), "{title}");
        assert!(title.chars().count() <= MAX_CHARS, "{title}");
        // No space to cut at: cut inside, still within the limit.
        let cjk = "帮".repeat(200);
        let title = one_line(&cjk).unwrap();
        assert_eq!(title.chars().count(), MAX_CHARS);
        assert!(title.ends_with('…'));
        // Exactly the limit is kept whole.
        let exact = "a".repeat(MAX_CHARS);
        assert_eq!(one_line(&exact).unwrap(), exact);
    }

    #[test]
    fn wrappers_are_not_prompts() {
        for text in [
            "<command-message>init is running…</command-message>\n<command-name>/init</command-name>",
            "<command-name>/exit</command-name>\n  <command-message>exit</command-message>",
            "<local-command-stdout>See ya!</local-command-stdout>",
            "<local-command-caveat>Caveat: The messages below were generated by the user</local-command-caveat>",
            "Caveat: The messages below were generated by the user while running local commands.",
            "<system-reminder>\nAs you answer, use this context.\n</system-reminder>",
            "<environment_context>\n  <cwd>/tmp/repo</cwd>\n</environment_context>",
            "<user_instructions>\nBe brief.\n</user_instructions>",
            "# AGENTS.md instructions for /tmp/repo\n\n<INSTRUCTIONS>\nRun tests.\n</INSTRUCTIONS>",
            "[Request interrupted by user for tool use]",
        ] {
            assert_eq!(from_prompt(text), None, "{text}");
        }
    }

    #[test]
    fn a_reminder_around_a_prompt_is_dropped_and_the_prompt_kept() {
        let text = "<system-reminder>Today is Monday.</system-reminder>\nAdd a --here flag\n<system-reminder>x";
        assert_eq!(from_prompt(text).as_deref(), Some("Add a --here flag"));
    }

    #[test]
    fn an_ide_context_gives_way_to_the_request() {
        let text = "# Context from my IDE setup:\n\n## Open tabs:\n- go.mod\n\n## My request for Codex:\nWhy is go 1.24 here?\n";
        assert_eq!(from_prompt(text).as_deref(), Some("Why is go 1.24 here?"));
    }

    #[test]
    fn a_command_gives_its_command_line() {
        let text = "<command-message>orchestrator is running…</command-message>\n<command-name>/orchestrator</command-name>\n<command-args>create TODO app by Next.js</command-args>";
        assert_eq!(from_command(text).as_deref(), Some("/orchestrator create TODO app by Next.js"));
        assert_eq!(from_command("<command-name>clear</command-name>").as_deref(), Some("/clear"));
        assert_eq!(from_command("plain text"), None);
    }
}
