//! What stands between stdin and the SDK: the answers JSON-RPC requires for lines the SDK
//! would otherwise end the session on or pass over in silence.
//!
//! `rmcp` ends a session whose first message is not `initialize`, and skips a line that is
//! not JSON without a word. A client that does either (a probe, a typo in a hand-written
//! pipe) then sees the server vanish. The gate reads stdin a line at a time and answers
//! itself: `-32700` for a line that is not JSON, `-32600` for JSON that is not a request
//! object, `-32002` for a request before `initialize` (a `ping` gets its empty result, as
//! MCP allows at any time); everything else goes on to the SDK unchanged. Replies from
//! both are written whole, one line each, through one lock on stdout.

use std::sync::Arc;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWrite, AsyncWriteExt, BufReader, DuplexStream};
use tokio::sync::Mutex;

/// The SDK's ends: what it reads (the lines let through) and where it writes.
pub struct Pipes {
    pub read: DuplexStream,
    pub write: DuplexStream,
}

/// A JSON-RPC error reply for `id`.
fn error(id: Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

/// Where a line goes: on to the SDK, answered here, or nowhere.
#[derive(Debug, PartialEq)]
enum Verdict {
    Pass,
    Answer(Value),
    Drop,
}

/// What to do with one line, `initialized` being whether `initialize` has gone through.
fn judge(line: &str, initialized: &mut bool) -> Verdict {
    if line.trim().is_empty() {
        return Verdict::Drop;
    }
    let message: Value = match serde_json::from_str(line) {
        Ok(message) => message,
        Err(e) => return Verdict::Answer(error(Value::Null, -32700, &format!("parse error: {e}"))),
    };
    let Some(object) = message.as_object() else {
        return Verdict::Answer(error(Value::Null, -32600, "invalid request: not a JSON-RPC message object"));
    };
    if *initialized {
        return Verdict::Pass;
    }
    let method = object.get("method").and_then(Value::as_str);
    match (method, object.get("id")) {
        (Some("initialize"), _) => {
            *initialized = true;
            Verdict::Pass
        }
        (Some("ping"), Some(id)) => Verdict::Answer(json!({"jsonrpc": "2.0", "id": id, "result": {}})),
        (_, Some(id)) => Verdict::Answer(error(id.clone(), -32002, "server not initialized: send `initialize` first")),
        // A notification (or a stray response) before the session: nothing to answer.
        (_, None) => Verdict::Drop,
    }
}

/// Write `line` and a newline, whole, under the lock.
async fn send<W: AsyncWrite + Unpin>(out: &Mutex<W>, line: &[u8]) -> std::io::Result<()> {
    let mut out = out.lock().await;
    out.write_all(line).await?;
    out.write_all(b"\n").await?;
    out.flush().await
}

/// Start the gate on stdin and stdout: returns the SDK's pipes. The tasks end when stdin
/// closes (the SDK then sees its input end) and when the SDK closes its output.
pub fn open() -> Pipes {
    let (sdk_read, mut into_sdk) = tokio::io::duplex(1 << 16);
    let (sdk_write, from_sdk) = tokio::io::duplex(1 << 16);
    let stdout = Arc::new(Mutex::new(tokio::io::stdout()));
    let out = stdout.clone();
    tokio::spawn(async move {
        let mut lines = BufReader::new(tokio::io::stdin()).lines();
        let mut initialized = false;
        while let Ok(Some(line)) = lines.next_line().await {
            let sent = match judge(&line, &mut initialized) {
                Verdict::Pass => {
                    async {
                        into_sdk.write_all(line.as_bytes()).await?;
                        into_sdk.write_all(b"\n").await
                    }
                    .await
                }
                Verdict::Answer(reply) => send(&out, reply.to_string().as_bytes()).await,
                Verdict::Drop => Ok(()),
            };
            if sent.is_err() {
                break;
            }
        }
        // Dropping `into_sdk` ends the SDK's input: the session closes as on a bare EOF.
    });
    tokio::spawn(async move {
        let mut lines = BufReader::new(from_sdk).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            if send(&stdout, line.as_bytes()).await.is_err() {
                break;
            }
        }
    });
    Pipes { read: sdk_read, write: sdk_write }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_before_initialize_are_answered_and_bad_lines_get_json_rpc_errors() {
        let mut initialized = false;
        let code = |v: Verdict| match v {
            Verdict::Answer(reply) => reply["error"]["code"].as_i64(),
            other => panic!("{other:?}"),
        };
        assert_eq!(code(judge("not json", &mut initialized)), Some(-32700));
        assert_eq!(code(judge("[1, 2]", &mut initialized)), Some(-32600));
        assert_eq!(code(judge(r#"{"jsonrpc":"2.0","id":7,"method":"tools/list"}"#, &mut initialized)), Some(-32002));
        assert_eq!(judge(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#, &mut initialized), Verdict::Drop);
        assert_eq!(
            judge(r#"{"jsonrpc":"2.0","id":8,"method":"ping"}"#, &mut initialized),
            Verdict::Answer(json!({"jsonrpc": "2.0", "id": 8, "result": {}}))
        );
        assert!(!initialized);
        assert_eq!(judge(r#"{"jsonrpc":"2.0","id":1,"method":"initialize"}"#, &mut initialized), Verdict::Pass);
        assert_eq!(judge(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#, &mut initialized), Verdict::Pass);
        assert_eq!(code(judge("{oops", &mut initialized)), Some(-32700));
    }
}
