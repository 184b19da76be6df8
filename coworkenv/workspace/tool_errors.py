"""Tool errors: returned to the agent as `{"error": {"code", "message"}}`, never raised to it."""

from __future__ import annotations


class ToolError(Exception):
    def __init__(self, code: int, message: str):
        super().__init__(message)
        self.code = code
        self.message = message

    def result(self) -> dict:
        return error_result(self.code, self.message)


def error_result(code: int, message: str) -> dict:
    return {"error": {"code": code, "message": message}}
