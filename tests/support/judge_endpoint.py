"""A deterministic rubric judge behind real HTTP, for the judge, rubric and calibration tests: a legitimate double for
an external model. It reads the criteria and the response out of the pinned prompt and applies a rule:

- every phrase the criteria put in double quotes must occur in the response (case-insensitive), and not right after a
  negation ("not", "no", "never", "isn't") — so a negated answer fails, a keyword-stuffed one passes (which is what
  calibration must catch);
- criteria containing `MALFORMED` get a reply that is no verdict; `MALFORMED-ONCE` gets one such reply, then a verdict.

It counts requests (per criteria too) and keeps every request's headers, so tests can see what was sent.
"""

from __future__ import annotations

import json
import re
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import ThreadingHTTPServer
from typing import Any

from tests.support.openai_wire import OpenAIWireHandler, serving

_CRITERIA = re.compile(r"<<<CRITERIA\n(.*?)\nCRITERIA>>>", re.DOTALL)
_RESPONSE = re.compile(r"<<<RESPONSE\n(.*?)\nRESPONSE>>>", re.DOTALL)
_NEGATION = re.compile(r"\b(?:not|no|never|isn't|wasn't)\s+(?:\w+\s+){0,1}$", re.IGNORECASE)


def rule_verdict(criteria: str, response: str) -> dict[str, Any]:
    for phrase in re.findall(r'"([^"]+)"', criteria):
        at = response.lower().find(phrase.lower())
        if at < 0:
            return {"pass": False, "reason": f"the response does not mention {phrase}"}
        if _NEGATION.search(response[:at]):
            return {"pass": False, "reason": f"the response denies {phrase}"}
    return {"pass": True, "reason": "the response mentions everything the criteria ask for"}


class JudgeHandler(OpenAIWireHandler):
    def do_POST(self):  # noqa: N802 (http.server API)
        body = self.read_body()
        prompt = body["messages"][-1]["content"]
        criteria, response = _CRITERIA.search(prompt).group(1), _RESPONSE.search(prompt).group(1)
        with self.server.lock:
            self.server.requests += 1
            self.server.per_criteria[criteria] += 1
            self.server.headers_seen.append(dict(self.headers))
            self.server.bodies.append(body)
            nth = self.server.per_criteria[criteria]
        if "MALFORMED-ONCE" in criteria and nth == 1 or "MALFORMED" in criteria and "MALFORMED-ONCE" not in criteria:
            return self.send_completion(body, {"content": "I think it is probably fine."})
        return self.send_completion(body, {"content": json.dumps(rule_verdict(criteria, response))})


@contextmanager
def judge_endpoint() -> Iterator[ThreadingHTTPServer]:
    """The judge on a free localhost port: `.url` is its base URL; `.requests`, `.per_criteria`, `.headers_seen` and
    `.bodies` say what it was asked."""
    with serving(
        JudgeHandler, lock=threading.Lock(), requests=0, per_criteria=Counter(), headers_seen=[], bodies=[]
    ) as httpd:
        httpd.url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
        yield httpd


JUDGE_MODEL = "rule-judge-1"


@contextmanager
def judging(cache_dir: Any, **config: Any) -> Iterator[tuple[ThreadingHTTPServer, Any]]:
    """The rule judge at a live endpoint, installed as the active judge for the block: (server, Judge)."""
    from coworkenv.judge.endpoint import Judge, JudgeConfig, using_judge

    with judge_endpoint() as server:
        fields = {"model": JUDGE_MODEL, "cache_dir": str(cache_dir), "max_retries": 0, "backoff_s": 0.0, **config}
        judge = Judge(JudgeConfig(base_url=server.url, **fields))
        with using_judge(judge):
            yield server, judge
