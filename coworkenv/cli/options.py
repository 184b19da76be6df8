"""Command options generated from a config model (TRL's pattern): every field of the model is an option of the command,
with the field's description as its help, and `--config FILE` reads the same fields from YAML; options given on the
command line override the file."""

from __future__ import annotations

import inspect
import types
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Literal

import typer
from pydantic import BaseModel, ValidationError

from coworkenv.errors import CoworkEnvError, format_validation_error
from coworkenv.pipeline.config import read_config_file

CONFIG_FILE = "config_file"


def option_name(field: str) -> str:
    return "--" + field.replace("_", "-")


def _option_type(annotation: Any) -> tuple[Any, str]:
    """(the type typer parses, a note for the help): `X | None` → X, a Literal → str listing its choices."""
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    if typing.get_origin(annotation) in (typing.Union, types.UnionType) and len(args) == 1:
        annotation = args[0]
    if typing.get_origin(annotation) is Literal:
        return str, "one of " + ", ".join(map(str, typing.get_args(annotation)))
    if typing.get_origin(annotation) is list:
        return list[str], "repeatable, or comma-separated"
    return annotation, ""


def config_parameters(model: type[BaseModel]) -> list[inspect.Parameter]:
    params = []
    for name, field in model.model_fields.items():
        typ, note = _option_type(field.annotation)
        default = (
            " (required)" if field.is_required() else "" if field.default is None else f" (default: {field.default})"
        )
        text = " ".join(t for t in (field.description or "", f"({note})" if note else "") if t) + default
        option = typer.Option(option_name(name), help=text, show_default=False)
        params.append(
            inspect.Parameter(
                name, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=Annotated[typ | None, option]
            )
        )
    config = typer.Option(
        "--config", help="YAML file of settings (the same names as the options; options override it)."
    )
    params.append(
        inspect.Parameter(
            CONFIG_FILE, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=Annotated[Path | None, config]
        )
    )
    return params


def config_values(model: type[BaseModel], kwargs: dict[str, Any]) -> dict[str, Any]:
    """The settings from `--config` and the options (which win), taken out of a command's keyword arguments; a value
    the model refuses is reported with the option that gave it (`--n`), or the file and field (`run.yaml: n`)."""
    file = kwargs.pop(CONFIG_FILE, None)
    values = read_config_file(file) if file is not None else {}
    options = set()
    for name, field in model.model_fields.items():
        given = kwargs.pop(name, None)
        if given is None:
            continue
        if typing.get_origin(_option_type(field.annotation)[0]) is list:
            given = [v.strip() for item in given for v in item.split(",") if v.strip()]
        values[name] = given
        options.add(name)
    try:
        model.model_validate(values)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        field = str(first["loc"][0]) if first.get("loc") else ""
        if first["type"] == "missing" and field in model.model_fields:  # named as the user can give it
            raise CoworkEnvError(
                f"{option_name(field)} is required"
                + (f" (an option, or a field of {file})" if file is not None else "")
            ) from None
        if field in options:
            raise CoworkEnvError(f"{option_name(field)}: {str(first['msg']).removeprefix('Value error, ')}") from None
        raise CoworkEnvError(
            format_validation_error(exc, str(file) if file is not None and field in values else "")
        ) from None
    return values


def with_config_options(model: type[BaseModel]) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Give a command every field of `model` as an option and `--config`; it is called with `settings`, a dict of
    the values given (unvalidated: the command validates them, e.g. with defaults of its own)."""

    def decorator(fn: Callable[..., Any]) -> Callable[..., Any]:
        own = [p for p in inspect.signature(fn).parameters.values() if p.name != "settings"]

        def command(**kwargs: Any) -> Any:
            settings = config_values(model, kwargs)
            return fn(settings=settings, **kwargs)

        command.__name__, command.__doc__ = fn.__name__, fn.__doc__
        own_hints = typing.get_type_hints(fn, include_extras=True)
        own = [p.replace(annotation=own_hints.get(p.name, p.annotation)) for p in own]
        command.__signature__ = inspect.Signature([*own, *config_parameters(model)])  # type: ignore[attr-defined]
        return command

    return decorator
