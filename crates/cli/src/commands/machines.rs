//! `tourney machines`: the fleet's hosts, blocked hosts and the lowest worker version.

use std::process::ExitCode;

use anyhow::Result;
use clap::Args;
use tourney_model::Utc;
use tourney_proto::v1 as pb;

use crate::support::admin::BlockingAdmin;
use crate::support::local::AdminTarget;

/// List the worker hosts, block or unblock one, or set the lowest worker version accepted.
///
/// Each host with its CPU, cores, memory, GPUs, operating system, tourney versions,
/// registrations, slots, games and last call, and whether it is blocked. An admin blocks a host from every
/// tournament with a message its workers log (`--block HOST --message TEXT`; their
/// registrations end now and new ones are refused), unblocks it (`--unblock HOST`), and sets
/// the lowest worker version the coordinator accepts (`--min-version 0.2.0`; `""`: any):
/// older workers are refused and told to upgrade. See docs/accounts.md.
#[derive(Args)]
pub(crate) struct MachinesArgs {
    #[command(flatten)]
    client: AdminTarget,
    /// Block this host (with --message).
    #[arg(
        long,
        value_name = "HOST",
        requires = "message",
        conflicts_with = "unblock"
    )]
    block: Option<String>,
    /// What the blocked host's workers are told.
    #[arg(long)]
    message: Option<String>,
    /// Unblock this host.
    #[arg(long, value_name = "HOST")]
    unblock: Option<String>,
    /// The lowest worker version accepted ("" for any).
    #[arg(long, value_name = "VERSION")]
    min_version: Option<String>,
    /// JSON for scripts.
    #[arg(long)]
    json: bool,
}

pub(crate) fn run(args: &MachinesArgs) -> Result<ExitCode> {
    let mut admin = BlockingAdmin::connect(&args.client)?;
    let block = (args.block.clone().zip(args.message.clone()))
        .or_else(|| args.unblock.clone().map(|host| (host, String::new())));
    if let Some((host, message)) = block {
        admin.block_host(pb::BlockHostRequest {
            host: host.clone(),
            message,
        })?;
        eprintln!(
            "{host} {}",
            if args.block.is_some() {
                "blocked"
            } else {
                "unblocked"
            }
        );
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(version) = &args.min_version {
        admin.set_min_worker_version(pb::SetMinWorkerVersionRequest {
            version: version.clone(),
        })?;
        eprintln!(
            "lowest worker version: {}",
            if version.is_empty() { "any" } else { version }
        );
        return Ok(ExitCode::SUCCESS);
    }
    list(&mut admin, args.json)?;
    Ok(ExitCode::SUCCESS)
}

/// Lists the machines (one JSON object a line with `json`), and the lowest worker version
/// accepted.
fn list(admin: &mut BlockingAdmin, json: bool) -> Result<()> {
    let listed = admin.list_machines(pb::ListMachinesRequest {})?;
    for m in &listed.machines {
        let facts = m.facts.clone().unwrap_or_default();
        if json {
            let line = serde_json::json!({
                "host": m.host, "cpu_model": facts.cpu_model, "cores": facts.cores,
                "memory_mb": facts.memory_mb, "os": facts.os, "versions": m.versions,
                "registrations": m.registrations, "slots": m.slots, "games": m.games,
                "nodes": m.nodes, "last_seen_ms": m.last_seen_ms, "blocked": m.blocked,
                "gpus": m.gpus.iter().map(|g| serde_json::json!({
                    "vendor": g.vendor, "model": g.model, "memory_mb": g.memory_mb,
                })).collect::<Vec<_>>(),
            });
            println!("{line}");
            continue;
        }
        let seen = if m.last_seen_ms == 0 {
            "-".to_string()
        } else {
            Utc::from_unix_ms(m.last_seen_ms).to_string()
        };
        println!(
            "{:<24} {:>3} cores {:>7} MiB  {:<32}{} {:<10} {:>2} reg. {:>8} games  {seen}{}",
            m.host,
            facts.cores,
            facts.memory_mb,
            facts.cpu_model,
            gpus_text(&m.gpus),
            m.versions.join(","),
            m.registrations,
            m.games,
            if m.blocked.is_empty() {
                String::new()
            } else {
                format!("  BLOCKED: {}", m.blocked)
            }
        );
    }
    if !json && !listed.min_worker_version.is_empty() {
        println!(
            "lowest worker version accepted: {}",
            listed.min_worker_version
        );
    }
    Ok(())
}

/// A host's GPUs in a few words (`  GPUs: 2 × NVIDIA GeForce RTX 4090 24564 MiB`); empty
/// for none.
fn gpus_text(gpus: &[pb::Gpu]) -> String {
    let mut kinds: Vec<(String, usize)> = Vec::new();
    for g in gpus {
        let name = match (g.model.as_str(), g.memory_mb) {
            ("", 0) => "unknown".to_string(),
            (model, 0) => model.to_string(),
            (model, mb) => format!("{model} {mb} MiB").trim().to_string(),
        };
        match kinds.iter_mut().find(|(k, _)| *k == name) {
            Some((_, n)) => *n += 1,
            None => kinds.push((name, 1)),
        }
    }
    if kinds.is_empty() {
        return String::new();
    }
    let listed: Vec<String> = (kinds.into_iter())
        .map(|(name, n)| format!("{n} × {name}"))
        .collect();
    format!("  GPUs: {}", listed.join(", "))
}
