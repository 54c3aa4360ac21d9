use std::io::Write;
use std::path::PathBuf;

use convo::interop::resume::Agent;
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
    let id = store.resolve_or_active(args.id.as_deref())?;
    let agent = match args.agent {
        Target::ClaudeCode => Agent::ClaudeCode,
        Target::Codex => Agent::Codex,
        Target::GeminiCli => Agent::GeminiCli,
        Target::Opencode => Agent::Opencode,
    };
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
    let home = agent_home(agent)?;
    let provider = match agent {
        Agent::Codex => codex_provider(&home),
        Agent::ClaudeCode | Agent::GeminiCli | Agent::Opencode => String::new(),
    };
    let model = match agent {
        Agent::Opencode => opencode_model(),
        Agent::ClaudeCode | Agent::Codex | Agent::GeminiCli => None,
    };
    let request = Request {
        id: &id,
        agent,
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
    let command = match agent {
        Agent::ClaudeCode => format!("{cd}claude --resume {}", resumed.session),
        Agent::Codex => format!("{cd}codex resume {}", resumed.session),
        Agent::GeminiCli => format!("{cd}gemini --resume {}", resumed.session),
        Agent::Opencode => format!("{cd}opencode --session {}", resumed.session),
    };
    ctx.note(&format!("carry on with: {command}"));
    Ok(())
}

/// The agent's own folder, as the agent finds it.
fn agent_home(agent: Agent) -> Result<PathBuf, CommandError> {
    let (var, folder) = match agent {
        Agent::ClaudeCode => ("CLAUDE_CONFIG_DIR", ".claude"),
        Agent::Codex => ("CODEX_HOME", ".codex"),
        // GEMINI_CLI_HOME stands for the home its `.gemini` is in.
        Agent::GeminiCli => {
            let home =
                std::env::var_os("GEMINI_CLI_HOME").filter(|d| !d.is_empty()).or_else(|| std::env::var_os("HOME"));
            return home.filter(|h| !h.is_empty()).map(|h| PathBuf::from(h).join(".gemini")).ok_or_else(|| {
                CommandError::input("cannot find Gemini CLI's folder: neither GEMINI_CLI_HOME nor HOME is set")
            });
        }
        // XDG's data folder, which opencode keeps its database in.
        Agent::Opencode => {
            let data = std::env::var_os("XDG_DATA_HOME")
                .filter(|d| !d.is_empty() && std::path::Path::new(d).is_absolute())
                .map(PathBuf::from)
                .or_else(|| {
                    std::env::var_os("HOME").filter(|h| !h.is_empty()).map(|h| PathBuf::from(h).join(".local/share"))
                });
            return data.map(|d| d.join("opencode")).ok_or_else(|| {
                CommandError::input("cannot find opencode's data folder: neither XDG_DATA_HOME nor HOME is set")
            });
        }
    };
    if let Some(dir) = std::env::var_os(var).filter(|d| !d.is_empty()) {
        return Ok(PathBuf::from(dir));
    }
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(|h| PathBuf::from(h).join(folder))
        .ok_or_else(|| CommandError::input(format!("cannot find the agent's folder: neither {var} nor HOME is set")))
}

/// The provider the user's Codex config uses (`model_provider`), else `openai`: Codex
/// refuses to resume a rollout of another provider.
fn codex_provider(home: &std::path::Path) -> String {
    std::fs::read_to_string(home.join("config.toml"))
        .ok()
        .and_then(|text| text.parse::<toml::Table>().ok())
        .and_then(|t| t.get("model_provider").and_then(|v| v.as_str()).map(str::to_owned))
        .unwrap_or_else(|| "openai".to_owned())
}

/// The model the user's opencode config names (`model`, `provider/model`), from
/// `$XDG_CONFIG_HOME/opencode/opencode.json` (else `~/.config/...`), `opencode.jsonc` or
/// `config.json` there.
fn opencode_model() -> Option<String> {
    let config = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|d| !d.is_empty() && std::path::Path::new(d).is_absolute())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").filter(|h| !h.is_empty()).map(|h| PathBuf::from(h).join(".config")))?
        .join("opencode");
    ["opencode.json", "opencode.jsonc", "config.json"].iter().find_map(|name| {
        let text = std::fs::read_to_string(config.join(name)).ok()?;
        let value: serde_json::Value = serde_json::from_str(&text).ok()?;
        value.get("model")?.as_str().filter(|m| m.contains('/')).map(str::to_owned)
    })
}

fn shell_quote(s: &str) -> String {
    if s.chars().all(|c| c.is_ascii_alphanumeric() || "/-_.".contains(c)) {
        s.to_owned()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}
