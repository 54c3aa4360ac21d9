//! What `append` appends: one event from a flag, checked before the store is opened, or
//! JSONL from a file or stdin, read and checked a batch of lines at a time while the store
//! writes them (so a 50 MB input is never held whole).

use std::io::{BufRead, IsTerminal, Read};

use convo::event::{self, Draft, Kind};

use super::Args;
use crate::cli::Ctx;
use crate::cli::command_error::CommandError;

/// How long an open pipe on stdin may stay silent before `append --user` and the like take
/// it for one a parent holds open and never writes to (a CI runner, `subprocess` with a
/// pipe): long enough for `echo … |` to have written, short enough not to be felt.
const STDIN_WAIT_MS: i64 = 200;

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
        use rustix::event::{PollFd, PollFlags, Timespec};
        let wait = Timespec { tv_sec: 0, tv_nsec: STDIN_WAIT_MS * 1_000_000 };
        if !matches!(rustix::event::poll(&mut [PollFd::new(&file, PollFlags::IN)], Some(&wait)), Ok(n) if n > 0) {
            return false;
        }
    }
    let mut chunk = [0u8; 4096];
    let n = (&file).read(&mut chunk).unwrap_or(0);
    chunk[..n].iter().any(|b| !b.is_ascii_whitespace())
}

/// What to append: events from a flag, or lines to read.
pub(super) enum Input {
    Events(Vec<Draft>),
    Lines(Lines),
}

/// JSONL being read: a batch of events at a time.
pub(super) struct Lines {
    reader: Box<dyn BufRead>,
    label: String,
    /// Lines read so far.
    line: usize,
    buffer: Vec<u8>,
}

/// Input handed to the store at a time: enough to keep the per-call cost out of sight,
/// little enough that memory stays a few MB whatever the input's size.
const BATCH_BYTES: usize = 1 << 20;

impl Lines {
    /// The next events (`None` at the end of the input); a line that is not an event is an
    /// error naming it.
    pub(super) fn next_batch(&mut self) -> Option<Result<Vec<Draft>, CommandError>> {
        let mut drafts = Vec::new();
        let mut bytes = 0;
        while bytes < BATCH_BYTES {
            self.buffer.clear();
            match self.reader.read_until(b'\n', &mut self.buffer) {
                Ok(0) => break,
                Ok(n) => bytes += n,
                Err(e) => return Some(Err(CommandError::input(format!("{}: {e}", self.label)))),
            }
            self.line += 1;
            let text = match std::str::from_utf8(&self.buffer) {
                Ok(text) => text,
                Err(e) => {
                    let column = e.valid_up_to() + 1;
                    return Some(Err(CommandError::input(format!(
                        "{} line {}: not valid UTF-8 (byte {column} of the line)",
                        self.label, self.line
                    ))
                    .hint("nothing was written; events are UTF-8 JSON: convert the input first, e.g. with iconv")));
                }
            };
            let text = text.strip_suffix('\n').unwrap_or(text);
            let text = text.strip_suffix('\r').unwrap_or(text);
            match event::parse_input_line(text, self.line) {
                Ok(draft) => drafts.extend(draft),
                Err(e) => return Some(Err(CommandError::bad_line(&self.label, e))),
            }
        }
        (bytes > 0).then_some(Ok(drafts))
    }

    /// The error for an input that held no event.
    pub(super) fn no_events(&self) -> CommandError {
        CommandError::input(format!("{}: no events", self.label)).hint("each line is one JSON event")
    }
}

/// The events to append, and how to name where they came from in an error.
pub(super) fn read(ctx: &Ctx, args: Args) -> Result<(Input, String), CommandError> {
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
    let single = |kind| Ok((Input::Events(vec![Draft::new(kind)]), String::new()));
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
        return Ok((
            Input::Events(vec![Draft::new(Kind::ToolCall { call_id, name, arguments })]),
            "--tool-call".into(),
        ));
    }
    if let Some(call_id) = args.tool_result {
        let content = args.content.unwrap_or_default();
        return Ok((
            Input::Events(vec![Draft::new(Kind::ToolResult { call_id, content, is_error: args.error })]),
            "--tool-result".into(),
        ));
    }
    let (reader, label): (Box<dyn BufRead>, String) = match args.file {
        Some(path) => {
            let file =
                std::fs::File::open(&path).map_err(|e| CommandError::input(format!("{}: {e}", path.display())))?;
            (Box::new(std::io::BufReader::with_capacity(1 << 16, file)), path.display().to_string())
        }
        None => {
            if std::io::stdin().is_terminal() {
                return Err(CommandError::input("no events to append")
                    .hint("pipe JSONL on stdin, use --file FILE, or a flag such as --user TEXT"));
            }
            (Box::new(std::io::BufReader::with_capacity(1 << 16, std::io::stdin())), "stdin".to_owned())
        }
    };
    let lines = Lines { reader, label: label.clone(), line: 0, buffer: Vec::new() };
    Ok((Input::Lines(lines), label))
}
