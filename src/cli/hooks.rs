//! Running the user's hook commands (`hooks.pre_compact`, `hooks.post_compact`): `sh -c
//! COMMAND` with a JSON document on stdin, its stdout and stderr captured (bounded), killed
//! at a timeout. Here, in the binary, because the library never starts a process.
//!
//! The hook runs in its own process group, so that a timeout kills everything it started
//! (`sh -c 'a | b'`, a script's children), not only `sh`; the group is killed as a whole with
//! `kill(-pgid, SIGKILL)`. The direct child is always waited for, so no zombie is left. A hook
//! is done when it has exited and closed its output: a background job that keeps stdout open
//! counts against the timeout, and is killed with the group when it passes. Being in its own
//! group also means a Ctrl-C on the terminal does not reach the hook; if convo dies of it, a
//! running hook is left to finish by itself.
//!
//! Unix process groups, and (in the tests) Linux's `/proc` to see that a killed group is gone.

use convo::ops::HookFailure;
use std::io::{Read, Write};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

/// What is kept of each of a hook's stdout and stderr; the rest is read and dropped, so a
/// chatty hook never blocks on a full pipe.
pub const OUTPUT_LIMIT: usize = 64 * 1024;

/// How a hook ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// It exited (or was killed by a signal) by itself.
    Exited(ExitStatus),
    /// It ran past the timeout and its process group was killed.
    TimedOut(Duration),
}

/// A hook's run: how it ended and what it printed (each at most [`OUTPUT_LIMIT`] bytes).
#[derive(Debug)]
pub struct Outcome {
    pub status: Status,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
}

impl Outcome {
    /// Why it failed, to follow "the pre_compact hook": `exited with status 2`, `was killed
    /// by signal 9`, `timed out after 30s`. `None` when it succeeded.
    pub fn failure(&self) -> Option<HookFailure> {
        use std::os::unix::process::ExitStatusExt;
        match self.status {
            Status::Exited(s) if s.success() => None,
            // A status is a code or a signal on Unix; -1 stands for neither.
            Status::Exited(s) => Some(match (s.code(), s.signal()) {
                (Some(code), _) => HookFailure::Exited(code),
                (None, Some(signal)) => HookFailure::Killed(signal),
                (None, None) => HookFailure::Exited(-1),
            }),
            Status::TimedOut(after) => Some(HookFailure::TimedOut(after)),
        }
    }
}

/// Run `command` with `sh -c`, `input` on its stdin, for at most `timeout`. An error only
/// when it cannot be started (no `sh`); a hook that does not read its stdin is fine.
pub fn run(command: &str, input: &[u8], timeout: Duration) -> std::io::Result<Outcome> {
    use std::os::unix::process::CommandExt;
    let deadline = Instant::now() + timeout;
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(command)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // Its own group, led by the child (pgid = its pid): what a timeout kills.
        .process_group(0)
        .spawn()?;
    let group = rustix::process::Pid::from_child(&child);

    // stdin from a thread: a hook that reads nothing would otherwise block this write once
    // the pipe is full. Its error (EPIPE when the hook exits unread; SIGPIPE is ignored in
    // Rust programs) is no concern of ours. Not joined: it ends when the pipe closes.
    let mut stdin = child.stdin.take().expect("stdin is piped");
    let input = input.to_vec();
    thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });

    // Each output pipe read to its end by a thread into a shared buffer, so that what was
    // read is there even when the pipe is still open at the deadline.
    let (done, closed) = mpsc::channel();
    let mut buffers = Vec::new();
    for pipe in [
        Box::new(child.stdout.take().expect("stdout is piped")) as Box<dyn Read + Send>,
        Box::new(child.stderr.take().expect("stderr is piped")),
    ] {
        let buffer = Arc::new(Mutex::new(Vec::new()));
        buffers.push(buffer.clone());
        let done = done.clone();
        thread::spawn(move || {
            drain(pipe, &buffer);
            let _ = done.send(());
        });
    }
    drop(done);

    // Poll rather than block in wait(): std has no wait with a timeout, and a thread blocked
    // in wait() could not be cancelled. 10 ms is far below any timeout worth setting.
    let mut exited = None;
    let mut timed_out = false;
    while exited.is_none() {
        match child.try_wait()? {
            Some(status) => exited = Some(status),
            None if Instant::now() >= deadline => {
                timed_out = true;
                break;
            }
            None => thread::sleep(Duration::from_millis(10)),
        }
    }
    // Then until both pipes close (a background job may hold them), within the deadline.
    let mut open = 2;
    while !timed_out && open > 0 {
        match closed.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            Ok(()) => open -= 1,
            Err(mpsc::RecvTimeoutError::Disconnected) => open = 0,
            Err(mpsc::RecvTimeoutError::Timeout) => timed_out = true,
        }
    }
    if timed_out {
        // The group id is the child's pid, reserved until the child is reaped below (or,
        // once it is, for as long as any member of its group lives): no stranger is hit.
        let _ = rustix::process::kill_process_group(group, rustix::process::Signal::KILL);
    }
    // Reap the child whatever happened: no zombie.
    let status = match exited {
        Some(status) => status,
        None => child.wait()?,
    };
    if timed_out {
        // The killed group's pipes close at once; a moment for the readers to take the last
        // bytes, without waiting on a process that left the group and holds them still.
        let grace = Instant::now() + Duration::from_millis(100);
        while open > 0 && closed.recv_timeout(grace.saturating_duration_since(Instant::now())).is_ok() {
            open -= 1;
        }
    }
    let take = |b: &Arc<Mutex<Vec<u8>>>| std::mem::take(&mut *b.lock().unwrap_or_else(|e| e.into_inner()));
    Ok(Outcome {
        // A hook that exited but held its output open past the deadline timed out too:
        // the deadline is the whole run's.
        status: if timed_out { Status::TimedOut(timeout) } else { Status::Exited(status) },
        stdout: take(&buffers[0]),
        stderr: take(&buffers[1]),
    })
}

/// Read `pipe` to its end, keeping the first [`OUTPUT_LIMIT`] bytes in `buffer`.
fn drain(mut pipe: Box<dyn Read + Send>, buffer: &Mutex<Vec<u8>>) {
    let mut chunk = [0u8; 8192];
    loop {
        match pipe.read(&mut chunk) {
            Ok(0) => return,
            Ok(n) => {
                let mut kept = buffer.lock().unwrap_or_else(|e| e.into_inner());
                let room = OUTPUT_LIMIT.saturating_sub(kept.len());
                kept.extend_from_slice(&chunk[..n.min(room)]);
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECOND: Duration = Duration::from_secs(1);

    #[test]
    fn success_with_stdout_gets_its_stdin() {
        let out = run("cat; echo done", b"{\"a\":1}\n", 10 * SECOND).unwrap();
        assert_eq!(out.failure(), None, "{out:?}");
        assert_eq!(String::from_utf8_lossy(&out.stdout), "{\"a\":1}\ndone\n");
        assert!(out.stderr.is_empty());
    }

    #[test]
    fn non_zero_exit_with_stderr() {
        let out = run("echo no way >&2; exit 3", b"{}", 10 * SECOND).unwrap();
        assert_eq!(out.failure().map(|f| f.to_string()).as_deref(), Some("exited with status 3"));
        assert_eq!(String::from_utf8_lossy(&out.stderr), "no way\n");
        assert!(out.stdout.is_empty());
    }

    #[test]
    fn a_hook_that_ignores_stdin_is_fine() {
        // More than a pipe holds, so the write would block (then fail) if it were not
        // off the waiting thread.
        let input = vec![b'x'; 1 << 20];
        let out = run("echo ok", &input, 10 * SECOND).unwrap();
        assert_eq!(out.failure(), None, "{out:?}");
        assert_eq!(out.stdout, b"ok\n");
        let out = run("exec 0<&-; echo closed", &input, 10 * SECOND).unwrap();
        assert_eq!(out.failure(), None, "{out:?}");
    }

    #[test]
    fn output_is_bounded() {
        let out = run("head -c 200000 /dev/zero; head -c 100000 /dev/zero >&2", b"", 10 * SECOND).unwrap();
        assert_eq!(out.failure(), None);
        assert_eq!((out.stdout.len(), out.stderr.len()), (OUTPUT_LIMIT, OUTPUT_LIMIT));
    }

    /// Whether process `pid` is gone: no such process, or one that has died and waits only
    /// for a reaper (a container's init may not reap the orphans it inherits).
    fn gone(pid: &str) -> bool {
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Err(_) => true,
            Ok(stat) => stat.rsplit_once(')').is_some_and(|(_, rest)| rest.trim_start().starts_with(['Z', 'X'])),
        }
    }

    #[test]
    fn a_timeout_kills_the_whole_group_quickly() {
        let dir = tempfile::tempdir().unwrap();
        let pids = dir.path().join("pids");
        // sh's own pid, then a grandchild's: both must die.
        let command = format!("echo $$ > {p}; sleep 30 & echo $! >> {p}; echo started; wait", p = pids.display());
        let start = Instant::now();
        let out = run(&command, b"", SECOND).unwrap();
        assert!(start.elapsed() < 5 * SECOND, "took {:?}", start.elapsed());
        assert_eq!(out.status, Status::TimedOut(SECOND));
        assert_eq!(out.failure().map(|f| f.to_string()).as_deref(), Some("timed out after 1s"));
        assert_eq!(out.stdout, b"started\n", "what came before the kill is kept");
        let pids = std::fs::read_to_string(&pids).unwrap();
        let pids: Vec<&str> = pids.lines().collect();
        assert_eq!(pids.len(), 2);
        // sh was reaped by us: no zombie, so no /proc entry at all.
        assert!(std::fs::metadata(format!("/proc/{}", pids[0])).is_err(), "sh {} is left", pids[0]);
        // The grandchild was killed with the group (reaped by whoever inherited it).
        let deadline = Instant::now() + 5 * SECOND;
        while !gone(pids[1]) && Instant::now() < deadline {
            thread::sleep(Duration::from_millis(20));
        }
        assert!(gone(pids[1]), "sleep {} still runs", pids[1]);
    }

    #[test]
    fn a_background_job_holding_stdout_counts_against_the_timeout() {
        let start = Instant::now();
        let out = run("sleep 30 & echo quick", b"", SECOND).unwrap();
        assert!(start.elapsed() < 5 * SECOND, "took {:?}", start.elapsed());
        assert_eq!(out.status, Status::TimedOut(SECOND));
        assert_eq!(out.stdout, b"quick\n");
    }

    #[test]
    fn a_missing_command_is_a_failure_not_an_error() {
        let out = run("/nonexistent/hook", b"{}", 10 * SECOND).unwrap();
        assert_eq!(out.failure().map(|f| f.to_string()).as_deref(), Some("exited with status 127"));
        assert!(!out.stderr.is_empty());
    }
}
