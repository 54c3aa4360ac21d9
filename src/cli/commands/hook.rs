use std::io::Read;
use std::path::PathBuf;

use convo::agents;
use convo::ops::import::{self, Followed};

use crate::cli::Ctx;
use crate::cli::command_error::CommandError;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Agent {
    /// Claude Code's hooks (`Stop`, `PreCompact`, `SessionEnd`, ...)
    #[value(name = "claude-code")]
    ClaudeCode,
    /// Gemini CLI's hooks (`AfterAgent`, `PreCompress`, `SessionEnd`, ...)
    #[value(name = "gemini-cli")]
    GeminiCli,
}

/// Record an agent's session from its hook: import what its transcript gained
///
/// Reads the JSON an agent hands its hooks on stdin (Claude Code and Gemini CLI alike:
/// `session_id`, `transcript_path`, `hook_event_name`) and imports the transcript as `import --follow`
/// does: the first time as a new conversation, then only what it gained. Prints nothing on
/// success (a hook's output can reach the agent); a failure exits non-zero with the reason
/// on stderr, and never blocks the agent. See the README for the settings.json snippet.
#[derive(clap::Args)]
pub struct Args {
    /// Whose hook this is
    #[arg(value_enum)]
    agent: Agent,
}

#[derive(serde::Deserialize)]
struct HookInput {
    transcript_path: Option<PathBuf>,
    session_id: Option<String>,
}

pub fn run(ctx: &Ctx, args: Args) -> Result<(), CommandError> {
    // The value's name on the command line is the agent's.
    let name = clap::ValueEnum::to_possible_value(&args.agent).map(|v| v.get_name().to_owned()).unwrap_or_default();
    let home = agents::by_name(&name).ok_or_else(|| CommandError::input(format!("{name}: no such agent")))?;
    let (format, agent) = (home.format(), home.title());
    let mut text = String::new();
    std::io::stdin().take(1 << 20).read_to_string(&mut text).map_err(|e| CommandError::input(format!("stdin: {e}")))?;
    let input: HookInput = serde_json::from_str(&text)
        .map_err(|e| CommandError::input(format!("stdin: not the JSON of a {agent} hook ({e})")))?;
    let Some(path) = input.transcript_path else {
        return Err(CommandError::input("stdin: the hook's JSON has no `transcript_path`"));
    };
    // The transcript is named after its session (Claude Code: `<session>.jsonl`; Gemini CLI:
    // `session-<time>-<the session's first 8 characters>.jsonl`): later hooks find the same
    // conversation by that name, and a file named for another session would start a second one.
    if let Some(session) = &input.session_id
        && !path.file_stem().is_some_and(|stem| home.names_session(&stem.to_string_lossy(), session))
    {
        return Err(CommandError::input(format!(
            "{}: not the transcript of session {session} (its file name differs)",
            path.display()
        )));
    }
    // The agent may run its hook before the turn's last lines reach the transcript: wait
    // for them, briefly (a hook must not hold the agent up); what is still missing then is
    // the next hook's.
    import::settle(&path, format, SETTLE);
    let store = ctx.open_store_for_write()?;
    let options = import::Options { title: None, again: false };
    let by = format!("hook {}", format.name());
    match import::follow(&store, &path, Some(format), &options, &ctx.clock) {
        Ok(followed) => {
            ctx.note_capture(&store, &by, &path, None);
            match followed {
                Followed::Started(done) => ctx.ui.landed(&done.landed),
                Followed::Grew { landed, .. } => landed.iter().for_each(|l| ctx.ui.landed(l)),
                Followed::Unchanged { .. } | Followed::TakenOver { .. } => {}
            }
            Ok(())
        }
        // Said where the agent shows a hook's output, and kept for `convo status`.
        Err(e) => {
            let e = CommandError::from(e);
            ctx.note_capture(&store, &by, &path, Some(&e.message));
            Err(e)
        }
    }
}

/// How long a hook waits for the transcript to hold the whole turn.
const SETTLE: std::time::Duration = std::time::Duration::from_secs(3);
