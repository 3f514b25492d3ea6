//! A tournament's status as `status --json` and `submit --wait --json` print it: the
//! coordinator's status view (`tourney_coordinator::api::view::StatusView`, sent as
//! `view_json`), with the keys these printed before it kept (`share` a number beside
//! `share_target` and `pairs_per_hour`, the SPRT's `llr`, `lower_bound`, `upper_bound` and
//! `decision`), and the build log the caller may read.

use anyhow::{Context, Result};
use serde_json::{Map, Value};
use tourney_proto::v1 as pb;

pub(crate) fn status_json(s: &pb::TournamentStatus) -> Result<Value> {
    let mut json: Map<String, Value> = serde_json::from_str(&s.view_json).with_context(|| {
        format!(
            "tournament {}'s status came without its JSON view: the coordinator is older \
             than this tourney (upgrade it, or leave out --json)",
            s.id
        )
    })?;
    let mut keep = |key: &str, value: Value| json.insert(key.to_string(), value);
    keep("share", s.share.into());
    keep("share_target", s.share_target.into());
    keep("pairs_per_hour", s.pairs_per_hour.into());
    if let Some(sprt) = &s.sprt {
        keep("llr", sprt.llr.into());
        keep("lower_bound", sprt.lower_bound.into());
        keep("upper_bound", sprt.upper_bound.into());
        keep("decision", sprt.decision.clone().into());
    }
    if !s.paused_log.is_empty() {
        // The end of the build log that paused it (for its author, approvers and admins).
        keep("paused_log", s.paused_log.clone().into());
    }
    Ok(Value::Object(json))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_view_is_printed_with_the_keys_printed_before_it() {
        let status = pb::TournamentStatus {
            id: 3,
            view_json: r#"{"id":3,"pairs_leased":4,"share":{"now":0.25,"target":0.5,"pairs_per_hour":60.0}}"#.into(),
            share: 0.25,
            share_target: 0.5,
            pairs_per_hour: 60.0,
            sprt: Some(pb::SprtState {
                llr: 1.5,
                decision: "continue".into(),
                ..Default::default()
            }),
            paused_log: "error: no such file".into(),
            ..Default::default()
        };
        let json = status_json(&status).unwrap();
        assert_eq!(json["pairs_leased"], 4);
        assert_eq!(json["share"], 0.25);
        assert_eq!(json["share_target"], 0.5);
        assert_eq!(json["pairs_per_hour"], 60.0);
        assert_eq!(json["llr"], 1.5);
        assert_eq!(json["decision"], "continue");
        assert_eq!(json["paused_log"], "error: no such file");
        let older = pb::TournamentStatus {
            id: 3,
            ..Default::default()
        };
        let error = format!("{:#}", status_json(&older).unwrap_err());
        assert!(error.contains("older than this tourney"), "{error}");
    }
}
