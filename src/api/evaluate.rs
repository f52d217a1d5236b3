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
    let compute = state.checker.compute();
    let out = if compute.inline(most) {
        job.answer(&Stop::at(Some(deadline)))?
    } else {
        in_turns(compute, caller, deadline, job).await?
    };
    Ok(json::response(out))
}

/// The work of one turn of an evaluation on the compute threads: its parse, or as many of its
/// URLs as add up to this ([`checker::work::placement`]), so that it holds a thread for a few
/// milliseconds at a time, not for all its URLs (docs/behaviour.md, "A fair share of the
/// compute").
const TURN_WORK: u64 = 4 * crate::compute::SMALL_WORK;

/// `job` on the compute threads in turns of `caller`'s: the parse, then its URLs a few at a
/// time, each turn queued behind other callers' as any job is. Each turn has a stop of its own
/// (at `deadline`, or when the request is gone during it): a turn's stop is marked as it ends.
async fn in_turns(
    compute: &crate::compute::Compute,
    caller: crate::compute::Caller,
    deadline: std::time::Instant,
    job: Evaluation,
) -> Result<Vec<u8>, ApiError> {
    let stop = || Stop::at(Some(deadline));
    let failed = |error: crate::compute::ComputeError| {
        tracing::error!(%error, "an evaluation panicked on the compute threads");
        ApiError::Internal
    };
    let job = std::sync::Arc::new(job);
    let parsing = std::sync::Arc::clone(&job);
    let robots = compute
        .offload(TURN_WORK, caller, stop(), move |_| parsing.parse())
        .await
        .map_err(failed)??;
    let mut writer = BatchWriter::new(job.urls.len());
    let mut next = 0;
    while next < job.urls.len() {
        let (turn, robots) = (std::sync::Arc::clone(&job), std::sync::Arc::clone(&robots));
        (writer, next) = compute
            .offload(TURN_WORK, caller, stop(), move |stop| {
                let next = turn.answer_some(&robots, next, &mut writer, stop);
                (writer, next)
            })
            .await
            .map_err(failed)?;
    }
    job.finish(&robots, writer)
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
    /// The answer's bytes, in one go; the URLs not reached when `stop` comes each get a problem.
    fn answer(self, stop: &Stop) -> Result<Vec<u8>, ApiError> {
        let robots = self.parse()?;
        let mut writer = BatchWriter::new(self.urls.len());
        let mut next = 0;
        while next < self.urls.len() {
            next = self.answer_some(&robots, next, &mut writer, stop);
        }
        self.finish(&robots, writer)
    }

    /// The file, parsed where a fetch would cut it, once its work is known to be within the
    /// request's budget.
    fn parse(&self) -> Result<std::sync::Arc<RobotsTxt>, ApiError> {
        let robots_txt = &self.robots_txt;
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
        Ok(robots)
    }

    /// Answers the URLs from `from` into `writer` until their work adds up to [`TURN_WORK`] (at
    /// least one); where the next turn starts. URLs reached after `stop` get a problem each.
    fn answer_some(
        &self,
        robots: &std::sync::Arc<RobotsTxt>,
        from: usize,
        writer: &mut BatchWriter,
        stop: &Stop,
    ) -> usize {
        let (mut work, rules) = (0, robots.indexed_rules());
        for (at, url) in self.urls.iter().enumerate().skip(from) {
            let answered = if stop.now() {
                Err(ApiError::MatchDeadline)
            } else {
                work +=
                    checker::work::placement(self.tokens.len(), rules, url.len(), self.decoding);
                evaluate_one(robots, &self.tokens, url, self.decoding, &self.limits)
            };
            match answered {
                Ok(answer) => writer.answer(&answer, false),
                Err(error) => writer.error(&error.problem()),
            }
            if work >= TURN_WORK {
                return at + 1;
            }
        }
        self.urls.len()
    }

    /// The answer's bytes, from the answers written and what the request asked besides.
    fn finish(&self, robots: &RobotsTxt, writer: BatchWriter) -> Result<Vec<u8>, ApiError> {
        let cut_at_bytes = (self.robots_txt.len() > self.max_bytes).then_some(self.max_bytes);
        let mut out = writer.close_results();
        if self.include {
            out.extend_from_slice(br#","parsed":"#);
            serde_json::to_writer(&mut out, &ParsedJson::from(robots))
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

    /// An evaluation whose URLs' work adds up to several turns: 5,000 rules, 1,000 URLs.
    fn heavy_evaluation() -> Evaluation {
        let mut robots_txt = String::from("user-agent: *\n");
        for n in 0..5_000 {
            robots_txt.push_str(&format!("disallow: /section-{n}/\n"));
        }
        Evaluation {
            robots_txt: robots_txt.into_bytes(),
            urls: (0..1_000)
                .map(|i| format!("/section-{}/page", i * 5))
                .collect(),
            ..evaluation(0)
        }
    }

    #[test]
    fn a_turn_answers_urls_until_its_work_is_done() {
        let job = heavy_evaluation();
        let robots = job.parse().unwrap();
        let mut writer = BatchWriter::new(job.urls.len());
        let next = job.answer_some(&robots, 0, &mut writer, &Stop::at(None));
        // 5,000 rules a URL: a turn takes about 210 of the 1,000.
        assert!(next > 1 && next < job.urls.len(), "{next}");
    }

    #[tokio::test]
    async fn an_evaluation_in_turns_answers_as_one_in_one_go() {
        let deadline = Instant::now() + Duration::from_secs(3600);
        let whole = heavy_evaluation()
            .answer(&Stop::at(Some(deadline)))
            .unwrap();
        let compute = crate::compute::Compute::new(1, 0);
        let caller = crate::compute::Caller::Unknown;
        let in_turns = in_turns(&compute, caller, deadline, heavy_evaluation())
            .await
            .unwrap();
        assert_eq!(String::from_utf8(in_turns), String::from_utf8(whole));
        let answered = results(&heavy_evaluation().answer(&Stop::at(None)).unwrap());
        assert!(answered.iter().all(|r| r["allowed"] == false));
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
