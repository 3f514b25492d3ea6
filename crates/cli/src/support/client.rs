//! Talking to a coordinator as a client: where it is and with which token, tournament
//! files read, checked and submitted (with their engines' programs), reports fetched.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use clap::Args;
use tourney_model::tournament::{ConfigError, TournamentConfig};
use tourney_proto::v1 as pb;
use tourney_proto::v1::admin_client::AdminClient;
use tourney_worker::{TokenInterceptor, connect};

use crate::support::command_files::{confined, engine_files};
use crate::support::refusal::{reply, status_error};

pub(crate) type Admin = AdminClient<
    tonic::service::interceptor::InterceptedService<tonic::transport::Channel, TokenInterceptor>,
>;

/// Where a client finds the coordinator.
#[derive(Args, Clone)]
pub(crate) struct ClientArgs {
    /// The coordinator's URL.
    #[arg(
        long,
        env = "TOURNEY_COORDINATOR",
        default_value = "http://127.0.0.1:7070"
    )]
    pub(crate) coordinator: String,
    /// The admin (or, for `worker`, the worker) token [default: TOURNEY_TOKEN, else the
    /// coordinator's own TOURNEY_ADMIN_TOKEN (for `worker`: TOURNEY_WORKER_TOKEN), so that
    /// commands run inside the coordinator's container or pod need no extra setting].
    /// (A token given here shows in the process list: prefer `--token-file` or the
    /// environment; `tourney` blanks it from its own command line as it starts.)
    #[arg(long, env = "TOURNEY_TOKEN", hide_env_values = true)]
    pub(crate) token: Option<String>,
    /// A file holding the token (its first line), in place of `--token`.
    #[arg(long, value_name = "FILE", conflicts_with = "token")]
    pub(crate) token_file: Option<PathBuf>,
    /// CA certificate (PEM) for a TLS coordinator (`https://` URLs).
    #[arg(long)]
    pub(crate) tls_ca: Option<PathBuf>,
}

impl ClientArgs {
    pub(crate) fn ca(&self) -> Result<Option<Vec<u8>>> {
        self.tls_ca
            .as_ref()
            .map(|p| std::fs::read(p).with_context(|| format!("reading {}", p.display())))
            .transpose()
    }

    /// The token given, else the one in `role_env` (`TOURNEY_ADMIN_TOKEN`,
    /// `TOURNEY_WORKER_TOKEN`).
    ///
    /// # Errors
    /// The `--token-file` cannot be read, or is empty.
    pub(crate) fn token_or(&self, role_env: &str) -> Result<Option<String>> {
        Ok(self.token_from(role_env)?.map(|(token, _)| token))
    }

    /// [`ClientArgs::token_or`], with where the token came from as the refusal of it says
    /// ([`crate::support::refusal::token_given`]): `--token-file FILE`, `--token`,
    /// `TOURNEY_TOKEN` (which clap gives as `--token` when the flag is not) or `role_env`.
    ///
    /// # Errors
    /// The `--token-file` cannot be read, or is empty.
    fn token_from(&self, role_env: &str) -> Result<Option<(String, String)>> {
        if let Some(file) = &self.token_file {
            let text = std::fs::read_to_string(file)
                .with_context(|| format!("--token-file {}", file.display()))?;
            let token = text.lines().next().unwrap_or_default().trim();
            anyhow::ensure!(!token.is_empty(), "--token-file {}: empty", file.display());
            let from = format!("--token-file {}", file.display());
            return Ok(Some((token.to_string(), from)));
        }
        let (token, from) = match &self.token {
            Some(token) if std::env::var("TOURNEY_TOKEN").is_ok_and(|e| e == *token) => {
                (token.clone(), "TOURNEY_TOKEN")
            }
            Some(token) => (token.clone(), "--token"),
            None => (std::env::var(role_env).unwrap_or_default(), role_env),
        };
        Ok((!token.is_empty()).then(|| (token, from.to_string())))
    }

    /// A client of the coordinator's Admin service with the token given; a refusal of the
    /// token says where it came from.
    ///
    /// # Errors
    /// The `--token-file` cannot be read, or the coordinator cannot be reached.
    pub(crate) async fn admin(&self) -> Result<Admin> {
        let token = self.token_from("TOURNEY_ADMIN_TOKEN")?;
        crate::support::refusal::token_given(token.as_ref().map(|(_, from)| from.clone()));
        let channel = connect(&self.coordinator, self.ca()?.as_deref())
            .await
            .with_context(|| format!("connecting to {}", self.coordinator))?;
        Ok(AdminClient::with_interceptor(
            channel,
            TokenInterceptor::new(token.as_ref().map(|(token, _)| token.as_str())),
        )
        .max_decoding_message_size(64 << 20))
    }
}

/// A tournament file and what it refers to.
pub(crate) struct TournamentFiles {
    /// The file's text.
    pub(crate) text: String,
    /// The openings file's text (empty for generated openings).
    pub(crate) openings: String,
    /// Outside engines' programs to upload, by engine name.
    pub(crate) uploads: Vec<(String, PathBuf)>,
    /// Outside engines' data files to upload: engine, file name, path.
    pub(crate) files: Vec<(String, String, PathBuf)>,
    /// Engines built from source: engine name, repository, commit as written.
    pub(crate) sources: Vec<(String, String, String)>,
}

/// Whether `path` is an executable regular file (after links): an engine's program.
///
/// # Errors
/// It is missing, not a regular file, or executable by nobody.
pub(crate) fn executable(path: &Path) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let meta =
        std::fs::metadata(path).with_context(|| format!("program {} not found", path.display()))?;
    if !meta.is_file() {
        bail!("program {} is not a regular file", path.display());
    }
    if meta.permissions().mode() & 0o111 == 0 {
        bail!("program {} is not executable (chmod +x it)", path.display());
    }
    Ok(())
}

/// Reads a tournament file and what it refers to, and checks them as the coordinator will
/// (player specs, the openings file), so that a mistake is reported with its line before
/// anything is started, printed or created.
pub(crate) fn read_tournament(path: &Path) -> Result<TournamentFiles> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    read_tournament_text(path, text)
}

/// [`read_tournament`] of `text` in place of the file's (a file changed by a preset): what
/// it names is read beside `path`.
pub(crate) fn read_tournament_text(path: &Path, text: String) -> Result<TournamentFiles> {
    let file = path.display().to_string();
    let config = TournamentConfig::parse(&text, &file)?;
    tourney_plan::check::check_players(&config, &text, &file)?;
    let base = path.parent().unwrap_or(Path::new("."));
    let openings = match &config.openings.file {
        // A sha256 names an openings file uploaded before (a preset's book), which the
        // coordinator reads itself.
        Some(f) if tourney_model::source::is_sha256(f) && !base.join(f).exists() => String::new(),
        Some(f) => {
            let p = confined(base, f).with_context(|| format!("{file}: openings.file"))?;
            let openings = std::fs::read_to_string(&p)
                .with_context(|| format!("{file}: openings.file: reading {}", p.display()))?;
            tourney_plan::check::openings_file(&config, &openings, &p.display().to_string())?;
            openings
        }
        None => String::new(),
    };
    // A problem with engine `i`'s command, at the line of its `command` key.
    let at_command = |i: usize, e: anyhow::Error| {
        let key = format!("engine[{i}].command");
        ConfigError::at_key(&text, &file, Some(("engine", i)), key, format!("{e:#}"))
    };
    let mut uploads = Vec::new();
    for (i, engine) in config.engines.iter().enumerate() {
        if let Some(program) = engine.command.as_deref().and_then(program_path) {
            // Like the openings: only a program beside or below the tournament file is
            // read and uploaded (never `/etc/shadow`, `../x` or a link out of it).
            let p = confined(base, &program)
                .and_then(|p| executable(&p).map(|()| p))
                .map_err(|e| at_command(i, e))?;
            uploads.push((engine.name.clone(), p));
        }
    }
    let mut files = Vec::new();
    let mut sources = Vec::new();
    for (i, engine) in config.engines.iter().enumerate() {
        if let Some(command) = engine.command.as_deref() {
            let place = "the tournament file's directory";
            let named =
                engine_files(base, place, command, &engine.files).map_err(|e| at_command(i, e))?;
            for (name, p) in named {
                files.push((engine.name.clone(), name, p));
            }
        }
        for (name, path) in &engine.files {
            // A sha256 names a file uploaded before; a path a file beside the tournament's.
            if tourney_model::source::is_sha256(path) && !base.join(path).exists() {
                continue;
            }
            let p = confined(base, path)
                .with_context(|| format!("{file}: engine '{}': files.{name}", engine.name))?;
            files.push((engine.name.clone(), name.clone(), p));
        }
        if let Some(source) = engine.source() {
            sources.push((engine.name.clone(), source.git, source.commit));
        }
    }
    Ok(TournamentFiles {
        text,
        openings,
        uploads,
        files,
        sources,
    })
}

/// The program of an outside engine's command line when it is given as a path (to be
/// uploaded); `None` for a bare name, looked up on each worker.
pub(crate) fn program_path(command: &str) -> Option<String> {
    let program = tourney_runner::split_command(command)
        .into_iter()
        .next()
        .unwrap_or_default();
    program.contains('/').then_some(program)
}

/// Uploads a program or data file as an artifact; its sha256. The file is hashed, then sent
/// a piece at a time (never whole in memory) unless the coordinator has it already. A file
/// uploaded before from this machine, unchanged (path, size, modification time), is not
/// even read again ([`crate::support::artifact_hashes`]).
pub(crate) async fn upload(admin: &mut Admin, program: &Path) -> Result<String> {
    let cache = crate::support::artifact_hashes::default_file();
    let key = crate::support::artifact_hashes::FileKey::of(program);
    let known = match (&cache, &key) {
        (Some(cache), Some(key)) => crate::support::artifact_hashes::lookup(cache, key),
        _ => None,
    };
    let sha256 = match known {
        Some(sha256) => sha256,
        None => {
            let path = program.to_path_buf();
            tokio::task::spawn_blocking(move || {
                std::fs::File::open(&path).and_then(tourney_model::sha256_of_reader)
            })
            .await?
            .with_context(|| format!("reading {}", program.display()))?
        }
    };
    let request = pb::HasArtifactRequest {
        sha256: sha256.clone(),
    };
    let present = reply(admin.has_artifact(request)).await?.present;
    if !present {
        let stored = send_file(admin, program).await?;
        if stored != sha256 {
            bail!(
                "{}: it changed while it was sent (sha256 {stored}, not {sha256}); send it again",
                program.display()
            );
        }
    }
    if let (Some(cache), Some(key)) = (&cache, &key) {
        crate::support::artifact_hashes::remember(cache, key, &sha256);
    }
    Ok(sha256)
}

/// Streams the file at `path` to the coordinator a piece at a time, read a few pieces
/// ahead on a blocking thread; the sha256 it was stored under.
async fn send_file(admin: &mut Admin, path: &Path) -> Result<String> {
    use std::io::Read;
    let (pieces, stream) = tokio::sync::mpsc::channel(4);
    let file = path.to_path_buf();
    let reader = tokio::task::spawn_blocking(move || -> std::io::Result<()> {
        let mut file = std::fs::File::open(&file)?;
        loop {
            let mut content = vec![0; tourney_proto::ARTIFACT_CHUNK];
            let n = file.read(&mut content)?;
            if n == 0 {
                return Ok(());
            }
            content.truncate(n);
            if pieces
                .blocking_send(pb::UploadArtifactRequest { content })
                .is_err()
            {
                return Ok(());
            }
        }
    });
    let sent = admin
        .upload_artifact(tokio_stream::wrappers::ReceiverStream::new(stream))
        .await;
    reader
        .await?
        .with_context(|| format!("reading {}", path.display()))?;
    let sent = sent.map_err(|status| {
        anyhow::anyhow!("uploading {}: {}", path.display(), status_error(status))
    })?;
    Ok(sent.into_inner().sha256)
}

/// Submits a tournament file through the admin API, with `text` in place of the file's
/// when given; returns its id.
pub(crate) async fn submit_text(
    admin: &mut Admin,
    path: &Path,
    text: Option<String>,
) -> Result<u64> {
    let TournamentFiles {
        text: config,
        openings,
        uploads,
        files,
        sources,
    } = match text {
        Some(text) => read_tournament_text(path, text)?,
        None => read_tournament(path)?,
    };
    let mut artifacts = BTreeMap::new();
    for (name, program) in uploads {
        artifacts.insert(name, upload(admin, &program).await?);
    }
    let mut uploaded = Vec::new();
    for (engine, name, file) in files {
        let sha256 = upload(admin, &file).await?;
        uploaded.push(pb::EngineFile {
            engine,
            name,
            sha256,
        });
    }
    let mut commits = std::collections::HashMap::new();
    for (engine, git, rev) in sources {
        let commit = crate::support::git::resolve_commit(&git, &rev)
            .with_context(|| format!("{}: engine '{engine}': commit", path.display()))?;
        commits.insert(engine, commit);
    }
    let request = pb::SubmitRequest {
        config,
        file: path.display().to_string(),
        openings,
        artifacts: artifacts.into_iter().collect(),
        files: uploaded,
        commits,
    };
    let submitted = reply(admin.submit(request)).await?;
    for warning in &submitted.warnings {
        eprintln!("warning: {}: {warning}", path.display());
    }
    Ok(submitted.id)
}

/// A tournament's report, rendered by the coordinator in `format`.
pub(crate) async fn fetch_report(
    admin: &mut Admin,
    id: u64,
    format: &str,
    tournament_link: &str,
) -> Result<String> {
    let request = pb::GetReportRequest {
        id,
        format: format.into(),
        tournament_link: tournament_link.into(),
    };
    Ok(reply(admin.get_report(request)).await?.content)
}

/// Blanks every occurrence of `secret` in this process's command line (what
/// `/proc/PID/cmdline` shows every user, engines included), in place: a token given with
/// `--token` stays readable only to this process's own memory. Linux only; elsewhere, or
/// when the kernel does not say where the command line is, nothing is done.
pub(crate) fn blank_from_command_line(secret: &str) {
    if secret.is_empty() {
        return;
    }
    let blanked = (|| -> std::io::Result<()> {
        use std::io::{Read, Seek, SeekFrom, Write};
        let stat = std::fs::read_to_string("/proc/self/stat")?;
        // The fields after the command's name in parentheses, from field 3 on: the command
        // line's start and end are fields 48 and 49.
        let rest = stat.rsplit_once(") ").map_or("", |(_, rest)| rest);
        let field = |n: usize| {
            rest.split(' ')
                .nth(n - 3)
                .and_then(|f| f.parse::<u64>().ok())
        };
        let (Some(start), Some(end)) = (field(48), field(49)) else {
            return Ok(());
        };
        let mut memory = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open("/proc/self/mem")?;
        let mut line = vec![0u8; end.saturating_sub(start) as usize];
        memory.seek(SeekFrom::Start(start))?;
        memory.read_exact(&mut line)?;
        let secret = secret.as_bytes();
        let mut at = 0;
        while let Some(found) = line[at..].windows(secret.len()).position(|w| w == secret) {
            line[at + found..at + found + secret.len()].fill(b'x');
            at += found + secret.len();
        }
        memory.seek(SeekFrom::Start(start))?;
        memory.write_all(&line)
    })();
    if let Err(e) = blanked {
        tracing::warn!(error = %e, "the token could not be blanked from the command line");
    }
}
