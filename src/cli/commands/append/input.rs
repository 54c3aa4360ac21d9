//! What `append` appends: one event from a flag, or JSONL from a file or stdin, parsed
//! whole before the store is opened.

use std::io::{IsTerminal, Read};

use convo::event::{self, Draft, Kind};

use super::Args;
use crate::cli::Ctx;
use crate::cli::command_error::CommandError;

/// The events to append, and how to name where they came from in an error.
pub(super) fn read(ctx: &Ctx, args: Args) -> Result<(Vec<Draft>, String), CommandError> {
    let single = |kind| Ok((vec![Draft::new(kind)], String::new()));
    if let Some(content) = args.user {
        return single(Kind::User { content });
    }
    if let Some(content) = args.assistant {
        return single(Kind::Assistant { content });
    }
    if let Some(content) = args.reasoning {
        return single(Kind::Reasoning { content });
    }
    if let Some(content) = args.system {
        return single(Kind::System { content });
    }
    if let Some(name) = args.tool_call {
        if name.trim().is_empty() {
            return Err(CommandError::input("--tool-call: the tool name must not be empty"));
        }
        let raw = args.args.unwrap_or_default();
        let arguments = serde_json::from_str(&raw).map_err(|e| {
            CommandError::input(format!("--args: not valid JSON ({e})"))
                .hint(r#"e.g. --args '{"path": "src/main.rs"}'"#)
        })?;
        let call_id = match args.call_id {
            Some(id) => {
                event::validate_event_id(&id).map_err(|e| CommandError::bad_id("--call-id", e))?;
                id
            }
            None => format!("call_{}", ctx.clock.new_id()),
        };
        return single(Kind::ToolCall { call_id, name, arguments });
    }
    if let Some(call_id) = args.tool_result {
        let content = args.content.unwrap_or_default();
        return Ok((
            vec![Draft::new(Kind::ToolResult { call_id, content, is_error: args.error })],
            "--tool-result".into(),
        ));
    }
    let (text, label) = match args.file {
        Some(path) => {
            let text =
                std::fs::read_to_string(&path).map_err(|e| CommandError::input(format!("{}: {e}", path.display())))?;
            (text, path.display().to_string())
        }
        None => {
            if std::io::stdin().is_terminal() {
                return Err(CommandError::input("no events to append")
                    .hint("pipe JSONL on stdin, use --file FILE, or a flag such as --user TEXT"));
            }
            let mut text = String::new();
            std::io::stdin().read_to_string(&mut text).map_err(|e| CommandError::input(format!("stdin: {e}")))?;
            (text, "stdin".to_owned())
        }
    };
    let drafts = event::parse_input(&text).map_err(|e| CommandError::bad_line(&label, e))?;
    if drafts.is_empty() {
        return Err(CommandError::input(format!("{label}: no events")).hint("each line is one JSON event"));
    }
    Ok((drafts, label))
}
