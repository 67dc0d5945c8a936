"""Fixtures of the API server tests."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from .helpers import Api, close_api, open_api


@pytest.fixture
async def api() -> AsyncIterator[Api]:
    opened = await open_api()
    try:
        yield opened
    finally:
        await close_api(opened)


