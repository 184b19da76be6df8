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


def error_of(result: object) -> dict | None:
    """The error of a tool's result, or None for a success: only `error_result`'s shape is an error (a record may have
    a field named `error` of its own, which a read returns as it is)."""
    err = result.get("error") if type(result) is dict else None
    return err if type(err) is dict and "code" in err and "message" in err else None
