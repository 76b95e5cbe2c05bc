"""The API's documentation pages — Swagger UI at /docs, ReDoc at /redoc — with their
scripts and styles served from here (the `fastapi-offline` package ships them), so they
work on a machine without internet; and `/`, which sends a browser to /docs."""

from __future__ import annotations

import functools
from importlib import resources

from fastapi import APIRouter, HTTPException
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.responses import HTMLResponse, RedirectResponse, Response

router = APIRouter(include_in_schema=False)
ASSETS = "/docs-assets"
_TYPES = {".js": "text/javascript", ".css": "text/css", ".png": "image/png"}
_FILES = ("swagger-ui-bundle.js", "swagger-ui.css", "redoc.standalone.js", "favicon.png")
_STATIC = resources.files("fastapi_offline").joinpath("static")
_TITLE = "toolrun API"


@router.get("/")
async def home() -> RedirectResponse:
    return RedirectResponse("/docs")


@router.get("/docs")
async def swagger_ui() -> HTMLResponse:
    return get_swagger_ui_html(
        openapi_url="/openapi.json",
        title=_TITLE,
        swagger_js_url=f"{ASSETS}/swagger-ui-bundle.js",
        swagger_css_url=f"{ASSETS}/swagger-ui.css",
        swagger_favicon_url=f"{ASSETS}/favicon.png",
    )


@router.get("/redoc")
async def redoc() -> HTMLResponse:
    return get_redoc_html(
        openapi_url="/openapi.json",
        title=_TITLE,
        redoc_js_url=f"{ASSETS}/redoc.standalone.js",
        redoc_favicon_url=f"{ASSETS}/favicon.png",
        with_google_fonts=False,
    )


@router.get(f"{ASSETS}/{{name}}")
async def asset(name: str) -> Response:
    """One of the pages' files, by name only (no path reaches the disk)."""
    if name not in _FILES:
        raise HTTPException(404, f"no such file: {name}")
    body = _file(name)
    suffix = name[name.rfind(".") :]
    return Response(body, media_type=_TYPES[suffix], headers={"Cache-Control": "max-age=86400"})


@functools.cache
def _file(name: str) -> bytes:
    """One of `_FILES`, read once per process (about 3 MB in all)."""
    return _STATIC.joinpath(name).read_bytes()
