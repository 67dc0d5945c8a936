"""Which fields a request's ``fieldSelector`` may name (the table is :mod:`fleetkeeper.api.fieldlabels`)."""

from __future__ import annotations

from fleetkeeper.api import fieldlabels
from fleetkeeper.apiserver.state import Context


def field_selector(ctx: Context) -> str | None:
    """The request's ``fieldSelector``, checked against its kind (``errors.BadRequest`` naming the field)."""
    text = ctx.param("fieldSelector") or None
    if text is None:
        return None
    info = ctx.target.info
    fieldlabels.checked(text, info.group, info.kind)
    return text


__all__ = ["field_selector"]
