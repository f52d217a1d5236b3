//! `POST /v1/evaluate`: URLs checked against a robots.txt given in the request, a tester that
//! touches no network.

use axum::extract::State;
use axum::response::Response;
use robotsd_engine::{PercentDecoding, RobotsTxt};

use super::batch_answer::BatchWriter;
use super::problem::{ApiError, BodyProblems, EdgeProblems, Problem};
use super::read_json;
use super::types::*;
use super::{AppState, JsonRequest, check_agents, check_batch_len, check_url_length, cost, json};
use crate::checker::{self, Checker};
use crate::compute::Stop;
use crate::config::Limits;

/// Checks URLs against a robots.txt given in the request: a tester that touches no network.
#[utoipa::path(
    post,
    path = "/v1/evaluate",
    tag = "check",
    request_body = EvaluateRequest,
    responses(
        (status = 200, description = "One answer or problem per URL, in order (`robots` is null: nothing was fetched), and the parsed file when asked for.", body = EvaluateResponse),
        (status = 400, description = "The body is not an evaluation request, or it names more agents than --max-agents and --max-agent-names allow.", body = Problem, content_type = "application/problem+json"),
        (status = 415, description = "The body is not declared as JSON (Content-Type: application/json).", body = Problem, content_type = "application/problem+json"),
        BodyProblems,
        EdgeProblems,
    )
)]
pub(super) async fn evaluate_post(
    State(state): State<AppState>,
    super::CallerOf(caller): super::CallerOf,
    body: JsonRequest,
) -> Result<Response, ApiError> {
    let request: EvaluateRequest = read_json(body, &state.limits)?;
    let robots_txt = match (request.robots_txt, request.robots_txt_b64) {
        (Some(text), None) => text.into_bytes(),
        (None, Some(b64)) => {
            use base64::Engine as _;
            base64::engine::general_purpose::STANDARD
                .decode(b64.trim())
                .map_err(|e| {
                    ApiError::InvalidBody(format!("robots_txt_b64 is not valid base64: {e}"))
                })?
        }
        (Some(_), Some(_)) => {
            return Err(ApiError::InvalidBody(
                "give robots_txt or robots_txt_b64, not both".into(),
            ));
        }
        (None, None) => {
            return Err(ApiError::InvalidBody(
                "missing robots_txt (or robots_txt_b64)".into(),
            ));
        }
    };
    let urls = match (request.url, request.urls) {
        (Some(url), None) => vec![url],
        (None, Some(urls)) => urls,
        (Some(_), Some(_)) => {
            return Err(ApiError::InvalidBody("give url or urls, not both".into()));
        }
        (None, None) => return Err(ApiError::Missing("url")),
    };
    check_batch_len(urls.len(), &state.limits)?;
    let agents = request.ua.into_vec();
    check_agents(&agents, &state.limits)?;
    let names = cost::check_names(&agents, &state.limits)?;
    let decoding = request
        .percent_decoding
        .map_or(state.checker.percent_decoding(), PercentDecoding::from);
    let tokens = checker::tokens(&agents).map_err(ApiError::from)?;
    let job = Evaluation {
        // Cut where a fetch cuts (Google reads 500 KiB), so that the tester answers as a
        // fetched copy of this text would be answered.
        max_bytes: state.checker.cache().fetcher().config().max_body_bytes,
        robots_txt,
        urls,
        names,
        tokens,
        decoding,
        include: request.include.is_some(),
        limits: state.limits.clone(),
    };
    // The parse and the matches are sized before either is done: a file of n bytes has fewer
    // than n / 4 rules (`a:/` and its line end).
    let most = checker::work::cost(job.urls.len(), names, job.robots_txt.len() / 4);
    let deadline = std::time::Instant::now() + super::batch_budget(state.limits.request_timeout);
    let out = state
        .checker
        .compute()
        .run(most, caller, Stop::at(Some(deadline)), move |stop| {
            job.answer(stop)
        })
        .await
        .map_err(|error| {
            tracing::error!(%error, "an evaluation panicked on the compute threads");
            ApiError::Internal
        })??;
    Ok(json::response(out))
}

/// An evaluation request, read and checked: what its answer is made of, on the compute threads.
struct Evaluation {
    max_bytes: usize,
    robots_txt: Vec<u8>,
    urls: Vec<String>,
    names: usize,
    tokens: Vec<checker::AgentToken>,
    decoding: PercentDecoding,
    include: bool,
    limits: Limits,
}

impl Evaluation {
    /// The answer's bytes; the URLs not reached when `stop` comes each get a problem.
    fn answer(self, stop: &Stop) -> Result<Vec<u8>, ApiError> {
        let robots_txt = &self.robots_txt;
        let cut_at_bytes = (robots_txt.len() > self.max_bytes).then_some(self.max_bytes);
        let robots = std::sync::Arc::new(RobotsTxt::parse(
            &robots_txt[..robots_txt.len().min(self.max_bytes)],
        ));
        // The file is given: its rules are known before any URL is matched.
        cost::check_work(
            self.urls.len(),
            self.names,
            robots.indexed_rules(),
            &self.limits,
        )?;
        let mut writer = BatchWriter::new(self.urls.len());
        for url in &self.urls {
            let answered = if stop.now() {
                Err(ApiError::MatchDeadline)
            } else {
                evaluate_one(&robots, &self.tokens, url, self.decoding, &self.limits)
            };
            match answered {
                Ok(answer) => writer.answer(&answer, false),
                Err(error) => writer.error(&error.problem()),
            }
        }
        let mut out = writer.close_results();
        if self.include {
            out.extend_from_slice(br#","parsed":"#);
            serde_json::to_writer(&mut out, &ParsedJson::from(&*robots))
                .map_err(|_| ApiError::Internal)?;
        }
        if let Some(cut) = cut_at_bytes {
            out.extend_from_slice(br#","cut_at_bytes":"#);
            out.extend_from_slice(cut.to_string().as_bytes());
        }
        out.push(b'}');
        Ok(out)
    }
}

fn evaluate_one(
    robots: &std::sync::Arc<RobotsTxt>,
    tokens: &[checker::AgentToken],
    url: &str,
    decoding: PercentDecoding,
    limits: &Limits,
) -> Result<checker::Answer, ApiError> {
    check_url_length(url, limits)?;
    Ok(Checker::evaluate(robots, tokens, url, decoding)?)
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::*;

    fn evaluation(urls: usize) -> Evaluation {
        Evaluation {
            max_bytes: 512_000,
            robots_txt: b"user-agent: *\ndisallow: /x\n".to_vec(),
            urls: (0..urls).map(|i| format!("/x/{i}")).collect(),
            names: 1,
            tokens: checker::tokens(&["a"]).unwrap(),
            decoding: PercentDecoding::Google,
            include: false,
            limits: Limits::default(),
        }
    }

    fn results(out: &[u8]) -> Vec<serde_json::Value> {
        let answer: serde_json::Value = serde_json::from_slice(out).unwrap();
        answer["results"].as_array().unwrap().clone()
    }

    #[test]
    fn urls_reached_before_the_stop_are_answered() {
        let stop = Stop::at(Some(Instant::now() + Duration::from_secs(3600)));
        let results = results(&evaluation(3).answer(&stop).unwrap());
        assert_eq!(results.len(), 3);
        assert!(results.iter().all(|r| r["allowed"] == false), "{results:?}");
    }

    #[test]
    fn urls_past_the_deadline_get_a_problem_each_and_nothing_is_matched() {
        let stop = Stop::at(Some(Instant::now()));
        let results = results(&evaluation(3).answer(&stop).unwrap());
        assert_eq!(results.len(), 3);
        for result in &results {
            let problem = &result["error"];
            assert_eq!(problem["type"], "urn:robotsd:problem:batch-deadline");
            assert_eq!(problem["status"], 504);
            assert!(
                problem["detail"].as_str().unwrap().contains("fewer items"),
                "{result}"
            );
        }
    }
}
