use std::io::Write;
use std::path::PathBuf;

use convo::agents::{self, Env};
use convo::ops::resume::{self, Request};

use crate::cli::Ctx;
use crate::cli::command_error::CommandError;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Target {
    /// Claude Code: `claude --resume ID` in the directory
    #[value(name = "claude-code")]
    ClaudeCode,
    /// Codex CLI: `codex resume ID`
    Codex,
    /// Gemini CLI: `gemini --resume ID` in the directory
    #[value(name = "gemini-cli")]
    GeminiCli,
    /// opencode: `opencode --session ID` in the directory
    Opencode,
}

/// Hand a conversation to an agent as a session its own resume reads
///
/// Writes the conversation as a new session file where the agent looks for it (Claude Code:
/// ~/.claude/projects/<the directory>/<id>.jsonl, or under $CLAUDE_CONFIG_DIR; Codex:
/// ~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl, or under $CODEX_HOME; Gemini CLI:
/// ~/.gemini/tmp/<the directory's project>/chats/session-<time>-<id>.jsonl, or under
/// $GEMINI_CLI_HOME; opencode: rows of a session for the directory's project in its database
/// ~/.local/share/opencode/opencode.db, or under $XDG_DATA_HOME, which opencode makes when it
/// first runs), prints the session id on stdout and the command that carries it on on
/// stderr. When the agent carries on, `hook`, `watch` and `import --follow` append its new
/// turns to the same conversation (or, when the conversation went on meanwhile, to a fork
/// of it from where the session began). The hand-over itself makes no commit: it is kept in
/// the store, locally, until the session's first capture commits it with its turns. An
/// existing session is never replaced; its id is always a fresh one.
///
/// Tool calls and reasoning stay the agent's own when the conversation came from that
/// agent; otherwise calls and results are handed over as text the model reads and
/// reasoning is left out.
#[derive(clap::Args)]
pub struct Args {
    /// Conversation id or title, or a unique prefix of either (default: the active one)
    #[arg(add = clap_complete::ArgValueCandidates::new(crate::cli::conversation_candidates))]
    id: Option<String>,
    /// The agent to carry the conversation on in
    #[arg(long = "in", value_enum, value_name = "AGENT")]
    agent: Target,
    /// Hand over the view an LLM is sent (compactions applied), not the raw events
    #[arg(long)]
    compacted: bool,
    /// The directory the agent will run in [default: the current directory]
    #[arg(long, value_name = "DIR")]
    cwd: Option<PathBuf>,
}

pub fn run(ctx: &Ctx, args: Args) -> Result<(), CommandError> {
    let store = ctx.open_store()?;
    ctx.fetch_if_lazy(&store, args.id.as_deref())?;
    let id = store.resolve_or_active(args.id.as_deref())?;
    // The target's name on the command line is the agent's.
    let name = clap::ValueEnum::to_possible_value(&args.agent).map(|v| v.get_name().to_owned()).unwrap_or_default();
    let agent = agents::by_name(&name).ok_or_else(|| CommandError::input(format!("{name}: no such agent")))?;
    let cwd = match &args.cwd {
        Some(dir) => std::fs::canonicalize(dir)
            .map_err(|e| CommandError::input(format!("--cwd {}: {e}", dir.display())))
            .and_then(|d| {
                if d.is_dir() {
                    Ok(d)
                } else {
                    Err(CommandError::input(format!("--cwd {}: not a directory", dir.display())))
                }
            })?,
        None => std::env::current_dir().map_err(|e| CommandError::input(format!("the current directory: {e}")))?,
    };
    let var = |name: &str| std::env::var_os(name);
    let env = Env::new(&var);
    let home = agent.folder(&env).map_err(|e| CommandError::input(e.to_string()))?;
    let provider = agent.provider(&home);
    let model = agent.model(&env);
    let request = Request {
        id: &id,
        agent: agent.agent(),
        compacted: args.compacted,
        cwd: &cwd,
        home: &home,
        provider: &provider,
        model: model.as_deref(),
    };
    let resumed = resume::resume(&store, &request, &ctx.clock)?;
    writeln!(ctx.ui.stdout(), "{}", resumed.session)?;
    ctx.note(&format!("wrote {} ({} events)", resumed.path.display(), resumed.events));
    if resumed.as_text {
        ctx.note("tool calls and results are handed over as text: the conversation came from elsewhere");
    }
    let here = std::env::current_dir().ok().and_then(|d| std::fs::canonicalize(d).ok());
    let cd = if here.as_deref() == Some(cwd.as_path()) {
        String::new()
    } else {
        format!("cd {} && ", shell_quote(&cwd.to_string_lossy()))
    };
    let command = agent.resume_command(&resumed.session);
    ctx.note(&format!("carry on with: {cd}{command}"));
    if let Some(program) = crate::cli::ui::missing_program(&command) {
        ctx.ui.warning(&format!(
            "`{program}` is not on PATH: the session is written, and {} carries it on once installed",
            agent.title()
        ));
    }
    Ok(())
}

fn shell_quote(s: &str) -> String {
    if s.chars().all(|c| c.is_ascii_alphanumeric() || "/-_.".contains(c)) {
        s.to_owned()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}
