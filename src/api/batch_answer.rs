//! A batch's answer (`POST /v1/check`, the `results` of `/v1/evaluate`) written item by item
//! into one buffer, within [`bounds::MAX_BATCH_ANSWER_BYTES`].
//!
//! Each answer is written as it is done and dropped, so a batch holds its JSON and not a
//! thousand answers beside it; once the bound is reached, every further item is written as
//! `view=verdict` writes it (the verdict is what a crawler must not lose) and the batch says
//! `"truncated": true`. The bytes are those serde writes for [`BatchResponse`] and
//! [`EvaluateResponse`], which the tests check.
//!
//! [`BatchResponse`]: super::types::BatchResponse
//! [`EvaluateResponse`]: super::types::EvaluateResponse

use crate::bounds;
use crate::checker::Answer;
use crate::fast::answer_json::write_answer;

use super::problem::Problem;

/// The JSON of a batch's `results`, being written.
pub(super) struct BatchWriter {
    out: Vec<u8>,
    /// Items written so far.
    items: usize,
    /// Items the batch has.
    expected: usize,
    max_bytes: usize,
    truncated: bool,
    /// Bytes of members added to items after their answers (`sign`): bounded by their own
    /// size per item, not counted against `max_bytes`, so that a batch signed is cut where the
    /// same batch unsigned is.
    added: usize,
}

/// Room kept for each item still to come, so that answering them as verdicts keeps the batch
/// within its bound: a verdict is under 100 bytes, and its `pace` member under 400.
const VERDICT_ROOM: usize = 512;

impl BatchWriter {
    /// A writer for `items` answers, bounded by [`bounds::MAX_BATCH_ANSWER_BYTES`].
    pub(super) fn new(items: usize) -> BatchWriter {
        BatchWriter::with_bound(items, bounds::MAX_BATCH_ANSWER_BYTES)
    }

    fn with_bound(items: usize, max_bytes: usize) -> BatchWriter {
        // A typical full answer is about 600 bytes; the buffer grows past that if it must.
        let mut out = Vec::with_capacity((items * 640).clamp(64, max_bytes) + 64);
        out.extend_from_slice(br#"{"results":["#);
        BatchWriter {
            out,
            items: 0,
            expected: items,
            max_bytes,
            truncated: false,
            added: 0,
        }
    }

    fn separator(&mut self) {
        if self.items > 0 {
            self.out.push(b',');
        }
        self.items += 1;
    }

    /// Appends `answer`, in full unless `verdict_only` or the bound was reached.
    pub(super) fn answer(&mut self, answer: &Answer, verdict_only: bool) {
        self.separator();
        if !verdict_only && !self.truncated {
            let start = self.out.len();
            write_answer(&mut self.out, answer);
            let to_come = self.expected.saturating_sub(self.items) * VERDICT_ROOM;
            if self.out.len() - self.added + to_come <= self.max_bytes {
                return;
            }
            self.out.truncate(start);
            self.truncated = true;
        }
        super::write_verdict(&mut self.out, answer);
    }

    /// Lets `add` write members into the item just written (its JSON ends the buffer, `}`
    /// last, and must end it again).
    pub(super) fn add_to_last<E>(
        &mut self,
        add: impl FnOnce(&mut Vec<u8>) -> Result<(), E>,
    ) -> Result<(), E> {
        let before = self.out.len();
        let added = add(&mut self.out);
        self.added += self.out.len().saturating_sub(before);
        added
    }

    /// Appends an item's problem.
    pub(super) fn error(&mut self, problem: &Problem) {
        self.separator();
        self.out.extend_from_slice(br#"{"error":"#);
        // A problem always serialises, and a Vec cannot fail to grow.
        let _ = serde_json::to_writer(&mut self.out, problem);
        self.out.push(b'}');
    }

    /// Closes `results` (and says whether it was cut); the caller appends any other member and
    /// the closing brace.
    pub(super) fn close_results(mut self) -> Vec<u8> {
        self.out.push(b']');
        if self.truncated {
            self.out.extend_from_slice(br#","truncated":true"#);
        }
        self.out
    }

    /// The whole document of a `POST /v1/check` answer.
    pub(super) fn finish(self) -> Vec<u8> {
        let mut out = self.close_results();
        out.push(b'}');
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::types::{BatchItem, BatchResponse, CheckResponse, VerdictResponse};
    use crate::checker::{AgentToken, Checker, Paced};

    fn answer(url: &str) -> Answer {
        let robots = std::sync::Arc::new(robotsd_engine::RobotsTxt::parse(
            b"User-agent: *\nDisallow: /private\nAllow: /\n",
        ));
        let agents = [AgentToken::new("bot").expect("a token")];
        Checker::evaluate(
            &robots,
            &agents,
            url,
            robotsd_engine::PercentDecoding::Google,
        )
        .expect("answer")
    }

    fn verdict(a: &Answer) -> BatchItem {
        BatchItem::Verdict(VerdictResponse {
            allowed: a.allowed,
            reason: a.reason,
            pace: crate::fast::answer_json::pace_member(&Paced::NotAsked),
            record: None,
            sign: None,
        })
    }

    #[test]
    fn writes_what_serde_writes_for_the_batch() {
        let answers: Vec<Answer> = ["https://a.test/x", "https://a.test/private/y"]
            .iter()
            .map(|u| answer(u))
            .collect();
        let problem = super::super::problem::ApiError::Missing("ua").problem();
        let mut writer = BatchWriter::new(3);
        writer.answer(&answers[0], false);
        writer.error(&problem);
        writer.answer(&answers[1], true);
        let expected = BatchResponse {
            results: vec![
                BatchItem::Answer(Box::new(CheckResponse::from(answers[0].clone()))),
                BatchItem::Error {
                    error: problem.clone(),
                },
                verdict(&answers[1]),
            ],
            truncated: None,
        };
        assert_eq!(
            String::from_utf8(writer.finish()).unwrap(),
            serde_json::to_string(&expected).unwrap()
        );
    }

    #[test]
    fn past_its_bound_a_batch_answers_verdicts_and_says_so() {
        // An answer longer than the room kept for a verdict.
        let a = answer(&format!("https://a.test/{}", "x".repeat(VERDICT_ROOM)));
        let one = {
            let mut out = Vec::new();
            write_answer(&mut out, &a);
            out.len()
        };
        // Room for two full answers, the opening, and the verdicts of the two after them.
        let mut writer = BatchWriter::with_bound(4, 12 + 2 * one + 1 + 2 * VERDICT_ROOM);
        for _ in 0..4 {
            writer.answer(&a, false);
        }
        let expected = BatchResponse {
            results: vec![
                BatchItem::Answer(Box::new(CheckResponse::from(a.clone()))),
                BatchItem::Answer(Box::new(CheckResponse::from(a.clone()))),
                verdict(&a),
                verdict(&a),
            ],
            truncated: Some(true),
        };
        assert_eq!(
            String::from_utf8(writer.finish()).unwrap(),
            serde_json::to_string(&expected).unwrap()
        );
    }

    #[test]
    fn members_added_to_items_do_not_count_against_the_bound() {
        let a = answer(&format!("https://a.test/{}", "x".repeat(VERDICT_ROOM)));
        let one = {
            let mut out = Vec::new();
            write_answer(&mut out, &a);
            out.len()
        };
        // Room for all four full answers, and not a byte more.
        let mut writer = BatchWriter::with_bound(4, 12 + 4 * one + 3);
        for _ in 0..4 {
            writer.answer(&a, false);
            // A member as large as the answer itself, added to each.
            writer
                .add_to_last(|out| {
                    out.pop();
                    out.extend_from_slice(format!(r#","sign":"{}"}}"#, "s".repeat(one)).as_bytes());
                    Ok::<(), ()>(())
                })
                .unwrap();
        }
        let written: serde_json::Value = serde_json::from_slice(&writer.finish()).unwrap();
        assert!(written.get("truncated").is_none(), "{written}");
        for item in written["results"].as_array().unwrap() {
            assert!(item.get("agent").is_some() && item.get("sign").is_some());
        }
    }
}
