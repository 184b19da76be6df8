"""Run in the sandbox (`checks.program`): one `code` check's program over one episode's evidence. A JSON request on
stdin — {"program", "evidence", "answers": {key: score}} — and one JSON reply on stdout: {"credit", "reason",
"asked": [{"key", "criteria", "text"}]}, or {"error"}. What the program prints goes to stderr. Standard library only."""

import hashlib
import json
import math
import sys
import traceback


def reply(request):
    """The program's reply to one request (what `main` writes), its prints sent to stderr."""
    answers = request.get("answers") or {}
    asked = {}

    def judge(criteria, text):
        """The judge's score in [0, 1] of `text` against `criteria`, from the answers the host gave; an unanswered
        question is recorded (the host asks the judge and runs the program again) and scores 0 meanwhile."""
        key = hashlib.sha256(f"{criteria}\0{text}".encode()).hexdigest()
        if key in answers:
            return float(answers[key])
        asked[key] = {"key": key, "criteria": str(criteria), "text": str(text)}
        return 0.0

    replies, sys.stdout = sys.stdout, sys.stderr
    try:
        namespace = {"__name__": "coworkenv_code_check"}
        exec(compile(request["program"], "<code check>", "exec"), namespace)
        if not callable(namespace.get("grade")):
            raise ValueError("the program defines no grade(evidence, judge)")
        result = namespace["grade"](request["evidence"], judge)
        reason = ""
        if isinstance(result, dict):
            result, reason = result.get("credit", result.get("score")), result.get("reason", "")
        elif isinstance(result, (tuple, list)) and len(result) == 2:
            result, reason = result
        if isinstance(result, bool):
            result = float(result)
        if not isinstance(result, (int, float)) or not math.isfinite(result) or not 0 <= result <= 1:
            raise ValueError(f"grade returned {result!r}: a credit in [0, 1] is expected")
        return {"credit": float(result), "reason": str(reason)[:500], "asked": list(asked.values())}
    except BaseException as exc:  # the program's failure is the check's result, reported in a line
        frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename != __file__]
        where = f" ({frames[-1].filename.rsplit('/', 1)[-1]}:{frames[-1].lineno})" if frames else ""
        return {"error": f"{type(exc).__name__}: {exc}{where}"[:500]}
    finally:
        sys.stdout = replies


def main() -> None:
    made = reply(json.loads(sys.stdin.read()))
    sys.stdout.write(json.dumps(made) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
