//! API keys from the command line (`keys create|list|revoke|rotate-signing-secret`), and the
//! first key a fresh store gets.

use std::net::SocketAddr;

use assetlib::{ApiKey, Config, Scope, Service};
use chrono::{Duration, Utc};

use super::cli::KeysCommand;
use super::data::open_service;
use super::{BoxError, UserError};

/// On a store without keys, creates one with every scope and prints it, once.
pub(crate) async fn ensure_first_key(service: &Service, addr: SocketAddr) -> Result<(), BoxError> {
    if !service.list_keys().await?.is_empty() {
        return Ok(());
    }
    let (record, key) = service
        .create_key("admin", Scope::ALL.to_vec(), None)
        .await?;
    service.store().flush().await?;
    let scopes: Vec<&str> = record.scopes.iter().map(|s| s.as_str()).collect();
    println!();
    println!(
        "  No API keys yet: created one with every scope ({}).",
        scopes.join(", ")
    );
    println!("  It is shown only this once. Keep it somewhere safe:");
    println!();
    println!("      {key}");
    println!();
    println!("  Try it:");
    println!("      curl -H 'Authorization: Bearer {key}' http://{addr}/api/v1/assets");
    println!();
    Ok(())
}

/// The configuration of a command that is not `serve`: it delivers no webhooks (only `serve`
/// does), so it takes no stream lease a server would wait for.
pub(crate) fn command_config() -> Config {
    let mut config = Config::default();
    config.webhook_workers = 0;
    config
}

/// Runs a `keys` command; what it prints goes to standard output.
pub(crate) async fn run_keys(command: KeysCommand) -> Result<(), BoxError> {
    match command {
        KeysCommand::Create {
            scopes,
            name,
            expires_in_days,
            workspace,
            data,
        } => {
            let service = open_service(&data, command_config()).await?;
            let expires_at = expires_in_days.map(|d| Utc::now() + Duration::days(i64::from(d)));
            let (record, key) = service
                .create_workspace_key(&name, scopes.0, expires_at, workspace.as_deref())
                .await?;
            service.store().flush().await?;
            println!(
                "Created key {} ({}): {}",
                record.id,
                record.name,
                describe(&record)
            );
            println!("It is shown only this once:");
            println!("{key}");
        }
        KeysCommand::List { data } => {
            let service = open_service(&data, command_config()).await?;
            let keys = service.list_keys().await?;
            if keys.is_empty() {
                println!("No keys.");
            }
            for key in keys {
                println!("{}  {}  {}", key.id, key.name, describe(&key));
            }
        }
        KeysCommand::Revoke { id, data } => {
            let service = open_service(&data, command_config()).await?;
            if !service.revoke_key(id).await? {
                return Err(UserError(format!("no key has the id {id}")).into());
            }
            service.store().flush().await?;
            println!("Revoked key {id}.");
        }
        KeysCommand::RotateSigningSecret { data } => {
            let service = open_service(&data, command_config()).await?;
            service.rotate_signing_secret().await?;
            service.store().flush().await?;
            println!("Made a new signing secret: links signed before no longer work.");
        }
    }
    Ok(())
}

/// Scopes, dates and state of a key, on one line.
fn describe(key: &ApiKey) -> String {
    let scopes: Vec<&str> = key.scopes.iter().map(|s| s.as_str()).collect();
    let ts = |t: chrono::DateTime<Utc>| t.format("%Y-%m-%d %H:%M UTC").to_string();
    let mut line = format!(
        "scopes {}, created {}",
        scopes.join(","),
        ts(key.created_at)
    );
    if let Some(at) = key.expires_at {
        line.push_str(&format!(", expires {}", ts(at)));
    }
    if let Some(workspace) = &key.workspace_id {
        line.push_str(&format!(", workspace {workspace}"));
    }
    let state = match (key.revoked_at, key.expires_at) {
        (Some(at), _) => format!("revoked {}", ts(at)),
        (None, Some(at)) if at <= Utc::now() => "expired".to_owned(),
        _ => "active".to_owned(),
    };
    format!("{line} [{state}]")
}
