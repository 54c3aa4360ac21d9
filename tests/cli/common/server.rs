//! A scripted HTTP/1.1 server on loopback for LLM tests: each connection gets the next
//! canned reply (the last one repeats), and every request is recorded.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

#[derive(Clone)]
pub enum Reply {
    /// Status, extra headers, JSON body.
    Json(u16, Vec<(&'static str, String)>, String),
    /// Server-sent events, each `data:` payload, then the connection closes.
    Sse(Vec<String>),
    /// Server-sent events, then silence for this many seconds before closing.
    SseThenHang(Vec<String>, u64),
    /// Nothing at all for this many seconds, not even headers.
    Silence(u64),
    /// The request read, the connection closed with no answer.
    Close,
}

#[derive(Debug, Clone)]
pub struct Recorded {
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

pub struct Server {
    pub url: String,
    pub requests: Arc<Mutex<Vec<Recorded>>>,
}

impl Server {
    pub fn start(replies: Vec<Reply>) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let requests = Arc::new(Mutex::new(Vec::new()));
        let log = requests.clone();
        std::thread::spawn(move || {
            for (n, stream) in listener.incoming().enumerate() {
                let Ok(mut stream) = stream else { continue };
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut request_line = String::new();
                if reader.read_line(&mut request_line).is_err() {
                    continue;
                }
                let path = request_line.split_whitespace().nth(1).unwrap_or("").to_owned();
                let mut headers = Vec::new();
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                        break;
                    }
                    if let Some((k, v)) = line.trim_end().split_once(": ") {
                        headers.push((k.to_ascii_lowercase(), v.to_owned()));
                    }
                }
                let length: usize =
                    headers.iter().find(|(k, _)| k == "content-length").and_then(|(_, v)| v.parse().ok()).unwrap_or(0);
                let mut body = vec![0; length];
                let _ = reader.read_exact(&mut body);
                log.lock().unwrap().push(Recorded { path, headers, body: String::from_utf8_lossy(&body).into_owned() });
                let reply = replies.get(n).or(replies.last()).cloned();
                match reply {
                    Some(Reply::Json(status, extra, body)) => {
                        let mut head = format!(
                            "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n",
                            body.len()
                        );
                        for (k, v) in extra {
                            head += &format!("{k}: {v}\r\n");
                        }
                        let _ = stream.write_all(format!("{head}\r\n{body}").as_bytes());
                    }
                    Some(Reply::Sse(events)) => {
                        let _ = stream.write_all(
                            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n",
                        );
                        for event in events {
                            let _ = stream.write_all(format!("data: {event}\n\n").as_bytes());
                            let _ = stream.flush();
                        }
                    }
                    Some(Reply::SseThenHang(events, seconds)) => {
                        let _ = stream.write_all(
                            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n",
                        );
                        for event in events {
                            let _ = stream.write_all(format!("data: {event}\n\n").as_bytes());
                            let _ = stream.flush();
                        }
                        std::thread::sleep(std::time::Duration::from_secs(seconds));
                    }
                    Some(Reply::Silence(seconds)) => std::thread::sleep(std::time::Duration::from_secs(seconds)),
                    Some(Reply::Close) | None => {}
                }
            }
        });
        Server { url, requests }
    }

    pub fn requests(&self) -> Vec<Recorded> {
        self.requests.lock().unwrap().clone()
    }
}

/// An OpenAI-style stream answering `text` in pieces, with usage, and (unless `cut`) `[DONE]`.
pub fn openai_stream(pieces: &[&str], cut: bool) -> Reply {
    let mut events: Vec<String> = pieces
        .iter()
        .map(|p| serde_json::json!({"choices": [{"index": 0, "delta": {"content": p}}]}).to_string())
        .collect();
    if !cut {
        events.push(
            serde_json::json!({"choices": [], "usage": {"prompt_tokens": 12, "completion_tokens": 3}}).to_string(),
        );
        events.push("[DONE]".into());
    }
    Reply::Sse(events)
}
