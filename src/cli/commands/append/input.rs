//! What `append` appends: one event from a flag, or JSONL from a file or stdin, parsed
//! whole before the store is opened.

use std::io::{IsTerminal, Read};

use convo::event::{self, Draft, Kind};

use super::Args;
use crate::cli::Ctx;
use crate::cli::command_error::CommandError;

/// How long an open pipe on stdin may stay silent before `append --user` and the like take
/// it for one a parent holds open and never writes to (a CI runner, `subprocess` with a
/// pipe): long enough for `echo … |` to have written, short enough not to be felt.
const STDIN_WAIT_MS: i32 = 200;

/// The event flag given, if any.
fn event_flag(args: &Args) -> Option<&'static str> {
    [
        (args.user.is_some(), "--user"),
        (args.assistant.is_some(), "--assistant"),
        (args.reasoning.is_some(), "--reasoning"),
        (args.system.is_some(), "--system"),
        (args.tool_call.is_some(), "--tool-call"),
        (args.tool_result.is_some(), "--tool-result"),
    ]
    .into_iter()
    .find_map(|(given, flag)| given.then_some(flag))
}

/// Whether stdin holds something other than whitespace, without waiting on a terminal or
/// on a pipe nobody writes to. Reads at most one chunk: a file or device answers at once; a
/// pipe or socket is read only once it is readable (data, or its writer gone) within
/// [`STDIN_WAIT_MS`]. A stdin that cannot be inspected (closed) holds nothing.
fn stdin_has_data() -> bool {
    use std::os::fd::AsFd;
    use std::os::unix::fs::FileTypeExt;
    let stdin = std::io::stdin();
    if stdin.is_terminal() {
        return false;
    }
    let Ok(file) = stdin.as_fd().try_clone_to_owned().map(std::fs::File::from) else {
        return false;
    };
    let Ok(meta) = file.metadata() else {
        return false;
    };
    if meta.file_type().is_fifo() || meta.file_type().is_socket() {
        let mut fd = libc::pollfd { fd: 0, events: libc::POLLIN, revents: 0 };
        // SAFETY: one valid pollfd, for the duration of the call.
        if unsafe { libc::poll(&mut fd, 1, STDIN_WAIT_MS) } <= 0 {
            return false;
        }
    }
    let mut chunk = [0u8; 4096];
    let n = (&file).read(&mut chunk).unwrap_or(0);
    chunk[..n].iter().any(|b| !b.is_ascii_whitespace())
}

/// The events to append, and how to name where they came from in an error.
pub(super) fn read(ctx: &Ctx, args: Args) -> Result<(Vec<Draft>, String), CommandError> {
    // One source is appended: events piped beside a flag would be dropped without a word.
    if let Some(flag) = event_flag(&args)
        && stdin_has_data()
    {
        return Err(CommandError::input(format!(
            "{flag} was given and stdin holds input too; append takes one source"
        ))
        .hint(
            "nothing was written; pipe the events alone, or give the flag with stdin from a terminal or </dev/null",
        ));
    }
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
        return Ok((vec![Draft::new(Kind::ToolCall { call_id, name, arguments })], "--tool-call".into()));
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
            let bytes = std::fs::read(&path).map_err(|e| CommandError::input(format!("{}: {e}", path.display())))?;
            let label = path.display().to_string();
            (utf8(bytes, &label)?, label)
        }
        None => {
            if std::io::stdin().is_terminal() {
                return Err(CommandError::input("no events to append")
                    .hint("pipe JSONL on stdin, use --file FILE, or a flag such as --user TEXT"));
            }
            let mut bytes = Vec::new();
            std::io::stdin().read_to_end(&mut bytes).map_err(|e| CommandError::input(format!("stdin: {e}")))?;
            (utf8(bytes, "stdin")?, "stdin".to_owned())
        }
    };
    let drafts = event::parse_input(&text).map_err(|e| CommandError::bad_line(&label, e))?;
    if drafts.is_empty() {
        return Err(CommandError::input(format!("{label}: no events")).hint("each line is one JSON event"));
    }
    Ok((drafts, label))
}

/// `bytes` as text, or an error naming the line (and column, in bytes) of the first byte
/// that is not UTF-8.
fn utf8(bytes: Vec<u8>, label: &str) -> Result<String, CommandError> {
    String::from_utf8(bytes).map_err(|e| {
        let good = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        let line = good.iter().filter(|&&b| b == b'\n').count() + 1;
        let column = good.len() - good.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1) + 1;
        CommandError::input(format!("{label} line {line}: not valid UTF-8 (byte {column} of the line)"))
            .hint("nothing was written; events are UTF-8 JSON: convert the input first, e.g. with iconv")
    })
}
