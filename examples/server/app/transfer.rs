//! `backup`, `restore` and `migrate`: a deployment's records and files into one archive and
//! back ([`assetlib::transfer::archive`]), or into a PostgreSQL database and a file store
//! ([`assetlib::transfer::copy_records`]); each with a progress bar on standard error, a
//! one-line summary on standard output, a non-zero exit on any failure, and safe to run again
//! after it was stopped.

use std::sync::Arc;

use assetlib::Store;
use assetlib::store::TransferStore;
use assetlib::transfer::{self, Progress, archive};
use indicatif::{ProgressBar, ProgressStyle};

use super::cli::{BackupArgs, MigrateArgs, RestoreArgs};
use super::data::{describe_data, open_files, open_postgres, open_service};
use super::{BoxError, UserError};

/// The store's records out and in; an error for a store that cannot be moved.
fn transfer_of(store: &Arc<dyn Store>) -> Result<&dyn TransferStore, BoxError> {
    store.transfer_store().ok_or_else(|| {
        UserError("this store cannot be moved: it keeps no TransferStore".into()).into()
    })
}

/// A bar of `len` records and files.
fn progress_bar(len: u64) -> Result<ProgressBar, BoxError> {
    Ok(
        ProgressBar::new(len).with_style(ProgressStyle::with_template(
            "{bar:40} {pos}/{len} records and files  {msg}  [{elapsed_precise}, {eta} left]",
        )?),
    )
}

fn show(bar: &ProgressBar) -> impl FnMut(Progress) + Send + 'static {
    let bar = bar.clone();
    move |now: Progress| {
        bar.set_position(now.done);
        bar.set_message(format!("{} MiB of files", now.bytes / (1024 * 1024)));
    }
}

/// Moves `bar` to the count done, keeping its message.
fn show_count(bar: &ProgressBar) -> impl FnMut(Progress) + Send + 'static {
    let bar = bar.clone();
    move |now: Progress| bar.set_position(now.done)
}

/// Runs `backup`.
pub(crate) async fn backup(args: BackupArgs) -> Result<(), BoxError> {
    super::init_logging();
    let service = open_service(&args.data, super::keys::command_config()).await?;
    let source = describe_data(&args.data);
    eprintln!("backup to {}: {source}", args.out.display());
    let store = transfer_of(service.store())?;
    let counts = store.record_counts().await?;
    let files = transfer::list_files(service.files()).await?.len() as u64;
    let bar = progress_bar(counts.total() + files)?;
    let made = archive::write(store, service.files(), &args.out, &source, show(&bar)).await;
    bar.finish_and_clear();
    let manifest = made?;
    println!(
        "backup {}: {}, {} files ({} MiB), records as of {}",
        args.out.display(),
        manifest.counts,
        manifest.file_count,
        manifest.file_bytes / (1024 * 1024),
        manifest.made_at.format("%Y-%m-%d %H:%M:%S UTC")
    );
    Ok(())
}

/// Runs `restore`.
pub(crate) async fn restore(args: RestoreArgs) -> Result<(), BoxError> {
    super::init_logging();
    let service = open_service(&args.data, super::keys::command_config()).await?;
    eprintln!(
        "restore {}: {}",
        args.archive.display(),
        describe_data(&args.data)
    );
    let store = transfer_of(service.store())?;
    let checking = ProgressBar::new_spinner();
    checking.set_message("checking the archive");
    checking.enable_steady_tick(std::time::Duration::from_millis(200));
    let path = args.archive.clone();
    let manifest = tokio::task::spawn_blocking(move || archive::verify(&path)).await?;
    checking.finish_and_clear();
    let manifest = manifest.map_err(|e| UserError(format!("{}: {e}", args.archive.display())))?;
    let bar = progress_bar(manifest.counts.total() + manifest.file_count)?;
    let restored =
        archive::restore_verified(&args.archive, manifest, store, service.files(), show(&bar))
            .await;
    bar.finish_and_clear();
    let restored = restored.map_err(|e| UserError(format!("{}: {e}", args.archive.display())))?;
    service.store().flush().await?;
    println!(
        "restored {}: {}, {} files ({} written now), from {} made {}",
        args.archive.display(),
        restored.manifest.counts,
        restored.manifest.file_count,
        restored.files,
        restored.manifest.source,
        restored.manifest.made_at.format("%Y-%m-%d %H:%M:%S UTC")
    );
    Ok(())
}

/// Runs `migrate`.
pub(crate) async fn migrate(args: MigrateArgs) -> Result<(), BoxError> {
    super::init_logging();
    let service = open_service(&args.data, super::keys::command_config()).await?;
    let source = transfer_of(service.store())?;
    let described = describe_data(&args.data);
    eprintln!("migrate {described} to PostgreSQL");
    let target_store = open_postgres(&args.to_database_url, args.data.search_language).await?;
    let target = transfer_of(&target_store)?;
    let target_files = match &args.to_files {
        Some(url) => Some(open_files(url)?),
        None => None,
    };
    let mark = format!("migrate from {described}");
    let there = target.record_counts().await?;
    if !there.is_empty() && target.transfer_mark().await?.as_deref() != Some(mark.as_str()) {
        return Err(UserError(format!(
            "the target database is not empty ({there}): migrate into an empty one"
        ))
        .into());
    }
    target.set_transfer_mark(Some(&mark)).await?;

    let counts = source.record_counts().await?;
    let bar = progress_bar(counts.total())?;
    bar.set_message("records");
    let copied = transfer::copy_records(source, target, show(&bar)).await;
    bar.finish_and_clear();
    let copied = copied?;
    let files = match &target_files {
        Some(to) => {
            let listed = transfer::list_files(service.files()).await?.len() as u64;
            let bar = progress_bar(listed)?;
            let done = transfer::copy_files(service.files(), to, show(&bar)).await;
            bar.finish_and_clear();
            Some(done?)
        }
        None => None,
    };
    let bar = progress_bar(copied.assets)?;
    bar.set_message("checking files");
    let checked = transfer::verify_copy(
        source,
        target,
        target_files.as_ref().unwrap_or(service.files()),
        show_count(&bar),
    )
    .await;
    bar.finish_and_clear();
    let checked = checked.map_err(|e| UserError(e.to_string()))?;
    target.set_transfer_mark(None).await?;
    let files_said = match files {
        Some(f) => format!(
            "{} files copied ({} MiB, {} there already)",
            f.files,
            f.bytes / (1024 * 1024),
            f.files_there
        ),
        None => "files left where they are".to_owned(),
    };
    println!("migrated {copied}; {files_said}; {checked} file checksums verified");
    Ok(())
}
