"""The approval web page: static HTML whose script calls the API with the operator's token.

Open it as ``/ui/approvals#token=<operator token>``: the fragment never reaches the server
or its logs; the page keeps the token in sessionStorage and drops it from the address bar.
"""

from __future__ import annotations

from importlib import resources

from fastapi import APIRouter
from fastapi.responses import HTMLResponse

router = APIRouter(tags=["ui"], include_in_schema=False)
_PAGE = resources.files("toolrun.api").joinpath("static/approvals.html").read_text("utf-8")
# The page loads nothing from elsewhere and may not be framed (clickjacking of Approve).
_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; script-src 'unsafe-inline'; "
    "style-src 'unsafe-inline'; frame-ancestors 'none'",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
}


@router.get("/ui/approvals", response_class=HTMLResponse)
async def approvals_page() -> HTMLResponse:
    return HTMLResponse(_PAGE, headers=_HEADERS)
