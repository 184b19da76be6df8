"""A grader in Claw-Eval's form, written for this repository's tests: naming the event is worth 0.5 and reading at
least three of the four notes the other 0.5 (a usage requirement task.yaml does not declare)."""

from claw_eval.graders.base import AbstractGrader
from claw_eval.models.trace import DimensionScores


class NotesDigestGrader(AbstractGrader):
    def grade(self, messages, dispatches, task, audit_data=None, judge=None):
        scores = DimensionScores(robustness=self.compute_robustness(dispatches))
        read = {
            d.request_body.get("article_id")
            for d in dispatches
            if d.tool_name == "kb_get_article" and d.response_status < 400
        }
        scores.completion = 0.5 * ("Q3 offsite" in self.final_text(messages)) + 0.5 * (len(read) >= 3)
        return scores
