//! History tied to the repository: which project a conversation's session ran in, and the
//! conversations of one project (`list --here`, `list --project DIR`).
//!
//! A session file records its working directory (and Codex its remote). A directory's path
//! differs from machine to machine and clone to clone, so a project is known by its
//! repository's remote URL, normalised so the https, ssh and scp-like spellings of one
//! repository are equal; a repository without a remote by its root path, and a folder
//! outside any repository by the recorded directories under it.
//!
//! A recorded cwd is data from a file, never authority: it is only ever read, as a path to
//! find a repository's remote in, and only when it is an absolute path to an existing
//! directory that is already canonical (no `..`, no symlink on the way), so a session file
//! cannot point convo anywhere a real session could not have run. Nothing is written
//! there and nothing is run there: the remote is read from the repository's own config
//! with gix, no other config (global, system, includes, environment) is consulted.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use crate::interop::Place;
use crate::store::{Project, Summary};

/// Why a directory's project could not be found.
#[derive(Debug, thiserror::Error)]
pub enum ProjectError {
    /// The directory to find the project of cannot be read, or is a file.
    #[error("{}: {source}", path.display())]
    NotADirectory {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// What `import` records of a session's place: the file's own fields, and the remote of
/// the repository at the recorded cwd when the file names none and that directory is one
/// of this machine's ([`readable_dir`]). Credentials in a URL are never kept.
pub fn recorded(place: &Place) -> Project {
    let remote = match &place.remote {
        Some(url) => Some(url.clone()),
        None => place.cwd.as_deref().and_then(readable_dir).and_then(|dir| repository_at(&dir)).and_then(|r| r.remote),
    };
    Project {
        cwd: place.cwd.clone(),
        branch: place.branch.clone(),
        remote: remote.map(|url| without_credentials(&url)),
    }
}

/// A recorded cwd as a directory that may be read: absolute, an existing directory, and
/// its own canonical path (so no `..` and no symlink leads elsewhere).
fn readable_dir(cwd: &str) -> Option<PathBuf> {
    let path = Path::new(cwd);
    if !path.is_absolute() || cwd.len() > Place::MAX_LEN {
        return None;
    }
    let real = std::fs::canonicalize(path).ok()?;
    (real == path && real.is_dir()).then_some(real)
}

/// A git repository found at or above a directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Repository {
    /// Its working tree (a bare repository's git directory).
    pub root: PathBuf,
    /// The URL of its `origin` remote, else of its first remote, as configured.
    pub remote: Option<String>,
}

/// The repository `dir` is in, read with gix from the repository's own config alone.
pub fn repository_at(dir: &Path) -> Option<Repository> {
    let repo = gix::discover_opts(dir, Default::default(), gix::open::Options::isolated()).ok()?;
    let root = repo.workdir().unwrap_or(repo.git_dir()).to_owned();
    let names = repo.remote_names();
    let name = names.iter().find(|n| *n == "origin").or_else(|| names.iter().next());
    let config = repo.config_snapshot();
    let remote = name
        .and_then(|name| config.string(format!("remote.{name}.url").as_str()))
        .map(|url| url.to_string())
        .filter(|url| !url.trim().is_empty());
    Some(Repository { root, remote })
}

/// `url` with no password or token: a web URL's user part goes whole (a token often sits
/// there alone), an ssh URL keeps its user name.
pub fn without_credentials(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else { return url.to_owned() };
    let (authority, path) = match rest.find('/') {
        Some(i) => rest.split_at(i),
        None => (rest, ""),
    };
    let Some((user, host)) = authority.rsplit_once('@') else { return url.to_owned() };
    let ssh = matches!(scheme.to_ascii_lowercase().as_str(), "ssh" | "git+ssh" | "ssh+git");
    match user.split_once(':') {
        _ if !ssh => format!("{scheme}://{host}{path}"),
        Some((name, _)) => format!("{scheme}://{name}@{host}{path}"),
        None => url.to_owned(),
    }
}

/// A remote URL in the form two spellings of one repository share: `host/path`, the
/// host lowercased; scheme, user, port, a trailing `.git` and slashes dropped; the path's
/// case kept. `https://github.com/a/b.git`, `git@github.com:a/b.git`,
/// `ssh://git@github.com/a/b` and `http://GitHub.com/a/b/` are all `github.com/a/b`. A
/// local path (or `file://` URL) stays a path.
pub fn normalise_remote(url: &str) -> Option<String> {
    let url = url.trim();
    if url.is_empty() {
        return None;
    }
    let (host, path) = if let Some((scheme, rest)) = url.split_once("://") {
        if scheme.eq_ignore_ascii_case("file") {
            (None, rest)
        } else {
            let (authority, path) = match rest.find('/') {
                Some(i) => rest.split_at(i),
                None => (rest, ""),
            };
            (Some(host_of(authority)), path)
        }
    } else if let Some(colon) = url.find(':')
        && !url[..colon].contains('/')
        && colon > 1
    {
        // scp-like `[user@]host:path` (a one-letter "host" would be a Windows drive).
        (Some(host_of(&url[..colon])), &url[colon + 1..])
    } else {
        (None, url)
    };
    let mut path = path.trim_end_matches('/');
    path = path.strip_suffix(".git").unwrap_or(path).trim_end_matches('/');
    match host {
        Some(host) if host.is_empty() => None,
        Some(host) => Some(format!("{host}/{}", path.trim_start_matches('/'))),
        None if path.is_empty() => None,
        None => Some(path.to_owned()),
    }
}

/// An authority's host, lowercased, without user or port (an IPv6 literal keeps its brackets).
fn host_of(authority: &str) -> String {
    let host = authority.rsplit_once('@').map_or(authority, |(_, host)| host);
    let host = match host.strip_prefix('[') {
        Some(v6) => v6.split_once(']').map_or(host, |(inside, _)| &host[..inside.len() + 2]),
        None => host.split_once(':').map_or(host, |(name, _)| name),
    };
    host.to_ascii_lowercase()
}

/// The one name of a project, wherever convo shows or groups by it (`usage --by project`,
/// `list --format json`, MCP): the normalised remote ([`normalise_remote`]), else the
/// recorded cwd; `None` when neither is known.
pub fn name(project: &Project) -> Option<String> {
    project.remote.as_deref().and_then(normalise_remote).or_else(|| project.cwd.clone())
}

/// Each conversation's project name ([`name`]); a fork or subagent that recorded no place
/// has the project of the conversation it came from (`fork` records none, and a fork
/// continues its parent's work wherever it is taken up).
pub fn names(summaries: &[Summary]) -> HashMap<String, Option<String>> {
    let by_id: HashMap<&str, &Summary> = summaries.iter().map(|s| (s.id.as_str(), s)).collect();
    summaries
        .iter()
        .map(|s| {
            let mut at = s;
            let mut seen = HashSet::new();
            let found = loop {
                if let Some(name) = name(&at.project) {
                    break Some(name);
                }
                // A loop of forks (ids come from data) ends at the first repeat.
                match at.came_from().and_then(|p| by_id.get(p)) {
                    Some(parent) if seen.insert(at.id.as_str()) => at = parent,
                    _ => break None,
                }
            };
            (s.id.clone(), found)
        })
        .collect()
}

/// Which conversations belong to one project.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    /// A git repository: matched by its normalised remote, and by its root path where a
    /// conversation has no remote recorded (or the repository has none).
    Repository { root: PathBuf, remote: Option<String> },
    /// A folder in no repository: matched by the recorded cwd, under it.
    Folder(PathBuf),
}

impl Scope {
    /// The project `dir` is in.
    pub fn of(dir: &Path) -> Result<Scope, ProjectError> {
        let not_dir = |source| ProjectError::NotADirectory { path: dir.to_owned(), source };
        let dir = std::fs::canonicalize(dir).map_err(not_dir)?;
        if !dir.is_dir() {
            return Err(not_dir(std::io::Error::from(std::io::ErrorKind::NotADirectory)));
        }
        Ok(match repository_at(&dir) {
            Some(repo) => {
                let root = std::fs::canonicalize(&repo.root).unwrap_or(repo.root);
                Scope::Repository { root, remote: repo.remote.as_deref().and_then(normalise_remote) }
            }
            None => Scope::Folder(dir),
        })
    }

    /// Whether a conversation that ran at `project` is this project's.
    pub fn holds(&self, project: &Project) -> bool {
        // A recorded `..` could climb out of the folder it starts with: such a path is no one's.
        let under = |root: &Path| {
            project.cwd.as_deref().map(Path::new).is_some_and(|cwd| {
                cwd.starts_with(root) && !cwd.components().any(|c| c == std::path::Component::ParentDir)
            })
        };
        match self {
            Scope::Repository { remote: Some(remote), root } => match &project.remote {
                Some(theirs) => normalise_remote(theirs).as_deref() == Some(remote.as_str()),
                None => under(root),
            },
            Scope::Repository { remote: None, root } => under(root),
            Scope::Folder(dir) => under(dir),
        }
    }
}

/// `summaries` kept to the conversations of `scope` (as `list` shows them: those that ran
/// there), with the subagents and forks that came from those.
pub fn within(summaries: Vec<Summary>, scope: &Scope) -> Vec<Summary> {
    let mut children: HashMap<&str, Vec<&str>> = HashMap::new();
    for s in &summaries {
        for parent in [s.subagent_of.as_deref(), s.forked_from.as_ref().map(|f| f.id.as_str())].into_iter().flatten() {
            children.entry(parent).or_default().push(&s.id);
        }
    }
    let mut kept: HashSet<&str> = HashSet::new();
    let mut todo: Vec<&str> = summaries.iter().filter(|s| scope.holds(&s.project)).map(|s| s.id.as_str()).collect();
    while let Some(id) = todo.pop() {
        if kept.insert(id) {
            todo.extend(children.get(id).into_iter().flatten());
        }
    }
    let kept: HashSet<String> = kept.into_iter().map(str::to_owned).collect();
    summaries.into_iter().filter(|s| kept.contains(&s.id)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_spellings_of_one_remote_are_equal() {
        for url in [
            "https://github.com/a/b.git",
            "https://github.com/a/b",
            "git@github.com:a/b.git",
            "git@github.com:a/b",
            "ssh://git@github.com/a/b",
            "ssh://git@github.com:22/a/b.git",
            "git+ssh://git@GitHub.com/a/b.git/",
            "http://GITHUB.com/a/b/",
            "https://user:token@github.com/a/b.git",
            "github.com:a/b.git",
        ] {
            assert_eq!(normalise_remote(url).as_deref(), Some("github.com/a/b"), "{url}");
        }
    }

    #[test]
    fn the_path_keeps_its_case_and_other_repositories_differ() {
        assert_eq!(normalise_remote("https://github.com/A/b").as_deref(), Some("github.com/A/b"));
        assert_ne!(normalise_remote("https://github.com/a/c"), normalise_remote("https://github.com/a/b"));
        assert_ne!(normalise_remote("https://gitlab.com/a/b"), normalise_remote("https://github.com/a/b"));
    }

    #[test]
    fn local_paths_stay_paths() {
        assert_eq!(normalise_remote("/srv/hub.git").as_deref(), Some("/srv/hub"));
        assert_eq!(normalise_remote("file:///srv/hub.git/").as_deref(), Some("/srv/hub"));
        assert_eq!(normalise_remote("C:/repos/hub.git").as_deref(), Some("C:/repos/hub"));
        assert_eq!(normalise_remote("  "), None);
        assert_eq!(normalise_remote("https:///x"), None);
    }

    #[test]
    fn ipv6_hosts_keep_their_brackets_and_lose_the_port() {
        assert_eq!(normalise_remote("ssh://git@[::1]:2222/a/b.git").as_deref(), Some("[::1]/a/b"));
    }

    #[test]
    fn credentials_never_stay_in_a_recorded_remote() {
        assert_eq!(without_credentials("https://x-token:ghp_secret@github.com/a/b.git"), "https://github.com/a/b.git");
        assert_eq!(without_credentials("https://ghp_secret@github.com/a/b"), "https://github.com/a/b");
        assert_eq!(without_credentials("ssh://git:pw@host/a/b"), "ssh://git@host/a/b");
        assert_eq!(without_credentials("ssh://git@host/a/b"), "ssh://git@host/a/b");
        assert_eq!(without_credentials("git@github.com:a/b.git"), "git@github.com:a/b.git");
    }

    #[test]
    fn a_hostile_cwd_is_never_read() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().canonicalize().unwrap();
        std::fs::create_dir(real.join("sub")).unwrap();
        std::os::unix::fs::symlink(real.join("sub"), real.join("link")).unwrap();
        let long = format!("/{}", "a/".repeat(5000));
        for cwd in ["../../etc", "relative/path", "", long.as_str()] {
            assert_eq!(readable_dir(cwd), None, "{cwd}");
        }
        let through_link = real.join("link");
        let dotted = real.join("sub/../sub");
        assert_eq!(readable_dir(through_link.to_str().unwrap()), None);
        assert_eq!(readable_dir(dotted.to_str().unwrap()), None);
        assert_eq!(readable_dir(real.join("missing").to_str().unwrap()), None);
        assert_eq!(readable_dir(real.join("sub").to_str().unwrap()), Some(real.join("sub")));
    }

    fn project(cwd: Option<&str>, remote: Option<&str>) -> Project {
        Project { cwd: cwd.map(str::to_owned), branch: None, remote: remote.map(str::to_owned) }
    }

    fn summary(id: &str, project: Project, forked_from: Option<&str>) -> Summary {
        Summary {
            id: id.into(),
            title: None,
            created: String::new(),
            updated: String::new(),
            stats: Default::default(),
            tokens: 0,
            subagent_of: None,
            forked_from: forked_from.map(|f| crate::store::ForkedFrom { id: f.into(), turn: 0 }),
            project,
            who: Default::default(),
        }
    }

    #[test]
    fn a_fork_without_a_place_takes_its_parents_project_and_a_loop_of_forks_ends() {
        let names = names(&[
            summary("a", project(Some("/w/a"), Some("git@GitHub.com:x/y.git")), None),
            summary("b", project(None, None), Some("a")),
            summary("c", project(None, None), Some("b")),
            summary("d", project(None, None), Some("e")),
            summary("e", project(None, None), Some("d")),
        ]);
        assert_eq!(names["c"].as_deref(), Some("github.com/x/y"));
        assert_eq!(names["b"], names["a"]);
        assert_eq!((names["d"].as_deref(), names["e"].as_deref()), (None, None));
    }

    #[test]
    fn a_scope_matches_by_remote_else_by_path() {
        let repo = Scope::Repository { root: "/w/proj".into(), remote: Some("github.com/a/b".into()) };
        assert!(repo.holds(&project(Some("/elsewhere"), Some("git@github.com:a/b.git"))));
        assert!(!repo.holds(&project(Some("/w/proj"), Some("https://github.com/a/c"))));
        assert!(repo.holds(&project(Some("/w/proj/src"), None)));
        assert!(!repo.holds(&project(Some("/w/project"), None)));
        assert!(!repo.holds(&project(Some("/w/proj/../../etc"), None)));
        assert!(!repo.holds(&project(None, None)));
        let folder = Scope::Folder("/w".into());
        assert!(folder.holds(&project(Some("/w/x"), Some("https://github.com/a/b"))));
        assert!(!folder.holds(&project(Some("/wx"), None)));
    }
}
